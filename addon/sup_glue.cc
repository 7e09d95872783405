// SPDX-License-Identifier: Apache-2.0
// nan glue for the supervisor socket: the evidence log syncer (synclog.c) and the
// supervisor socket's I/O thread (sup_server.c) and its client (sup_client.c).
// Argument checking, object building and errno exceptions only; the logic
// lives in the plain-C files.
#include <nan.h>
#include <cerrno>
#include <cstring>
#include <string>
#include "synclog.h"
#include "sup_server.h"
#include "sup_client.h"
#include "notify.h"
#include "proc.h"
#include "subject.h"
#include "nan_util.h"
#include <mutex>
#include <vector>

namespace {

using gs_nan::Big;
using gs_nan::CloseWaker;
using gs_nan::Num;
using gs_nan::Set;
using gs_nan::ThrowErr;
using gs_nan::Wake;
using gs_nan::Waker;

// The wrapper of a C object that signals JS through a Waker: shut, it closes
// both (the C object first, so that it signals no more).
template <class Self, class C, void (*CloseC)(C *)>
class Woken : public Nan::ObjectWrap {
 protected:
  C *c_ = nullptr;  // null once shut
  Waker *waker_ = nullptr;

  ~Woken() override { Shut(); }

  void Shut() {
    if (c_) {
      CloseC(c_);
      c_ = nullptr;
    }
    CloseWaker(waker_);
  }

  // the receiver, or null (with Error(closed) thrown) once it is shut
  static Self *Open(const Nan::FunctionCallbackInfo<v8::Value> &info, const char *closed) {
    Self *self = Nan::ObjectWrap::Unwrap<Self>(info.Holder());
    return gs_nan::IfOpen(self, self->c_ != nullptr, closed);
  }
};

// ---- SyncLog ---------------------------------------------------------------

class SyncLog : public Woken<SyncLog, gs_synclog, gs_synclog_close> {
 public:
  static void Init(v8::Local<v8::Object> target) {
    ctor().Reset(gs_nan::DefineClass(target, "SyncLog", New,
                                     {{"write", Write},
                                      {"request", Request},
                                      {"expect", Expect},
                                      {"siblings", Siblings},
                                      {"state", State},
                                      {"progress", Progress},
                                      {"syncNow", SyncNow},
                                      {"drain", Drain},
                                      {"testFail", TestFail},
                                      {"close", Close},
                                      {"ref", RefLoop},
                                      {"unref", UnrefLoop}}));
  }

  static Nan::Persistent<v8::FunctionTemplate> &ctor() {
    static Nan::Persistent<v8::FunctionTemplate> c;
    return c;
  }

  /** the C log behind a JS SyncLog, or null (with a JS exception) */
  static gs_synclog *From(v8::Local<v8::Value> v) {
    if (!v->IsObject() || !Nan::New(ctor())->HasInstance(v)) {
      Nan::ThrowTypeError("expected an SyncLog");
      return nullptr;
    }
    SyncLog *self = Nan::ObjectWrap::Unwrap<SyncLog>(v.As<v8::Object>());
    if (!self->c_) Nan::ThrowError("SyncLog is closed");
    return self->c_;
  }

 private:
  Nan::Callback on_durable_;
  bool refd_ = false;

  static SyncLog *Open(const Nan::FunctionCallbackInfo<v8::Value> &info) {
    return Woken::Open(info, "SyncLog is closed");
  }

  // new SyncLog(fd, delayUs, onDurable[, syncerWrites])
  static NAN_METHOD(New) {
    if (!info.IsConstructCall()) return Nan::ThrowTypeError("use new SyncLog(fd, delayUs, onDurable)");
    if (info.Length() < 3 || !info[0]->IsInt32() || !info[1]->IsUint32() || !info[2]->IsFunction())
      return Nan::ThrowTypeError("SyncLog(fd: int, delayUs: uint, onDurable: function, syncerWrites?: boolean)");
    unsigned flags = info.Length() > 3 && Nan::To<bool>(info[3]).FromJust() ? GS_SYNCLOG_SYNCER_WRITES : 0;
    SyncLog *self = new SyncLog();
    self->Wrap(info.This());
    self->on_durable_.Reset(info[2].As<v8::Function>());
    self->waker_ = gs_nan::NewWaker(&self->on_durable_, "gensee:synclog");
    uv_unref(reinterpret_cast<uv_handle_t *>(&self->waker_->h));
    gs_err err = {};
    self->c_ = gs_synclog_open(Nan::To<int32_t>(info[0]).FromJust(), Nan::To<uint32_t>(info[1]).FromJust(), flags, Wake,
                               self->waker_, &err);
    if (!self->c_) {
      CloseWaker(self->waker_);
      return ThrowErr(err);
    }
    info.GetReturnValue().Set(info.This());
  }

  // write(buf, nLines, wantSync) -> ticket
  static NAN_METHOD(Write) {
    SyncLog *self = Open(info);
    if (!self) return;
    if (info.Length() < 3 || !node::Buffer::HasInstance(info[0]) || !info[1]->IsUint32())
      return Nan::ThrowTypeError("write(buf: Buffer, nLines: uint, wantSync: boolean)");
    gs_err err = {};
    uint64_t t = gs_synclog_write(self->c_, node::Buffer::Data(info[0]), node::Buffer::Length(info[0]),
                                  Nan::To<uint32_t>(info[1]).FromJust(), Nan::To<bool>(info[2]).FromJust(), &err);
    if (!t) return ThrowErr(err);
    info.GetReturnValue().Set(Num(static_cast<double>(t)));
  }

  static NAN_METHOD(Request) {
    SyncLog *self = Open(info);
    if (self) gs_synclog_request(self->c_);
  }

  // expect(ticket): somebody in JS waits for it (counted for siblings until a sync covers it)
  static NAN_METHOD(Expect) {
    SyncLog *self = Open(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsNumber()) return Nan::ThrowTypeError("expect(ticket: number)");
    double t = Nan::To<double>(info[0]).FromJust();
    if (!(t >= 1) || t > 9007199254740991.0) return Nan::ThrowRangeError("expect: ticket must be a positive integer");
    // a failed or closing log: nothing to count; the caller learns of the
    // failure where it always did (its write, or the wake-up after it)
    (void)gs_synclog_expect(self->c_, static_cast<uint64_t>(t));
  }

  // siblings(delayUs): hold a sync up to delayUs while socket requests are being decided (0: off)
  static NAN_METHOD(Siblings) {
    SyncLog *self = Open(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsUint32() || Nan::To<uint32_t>(info[0]).FromJust() > 100000)
      return Nan::ThrowRangeError("siblings(delayUs: 0..100000)");
    uint32_t us = Nan::To<uint32_t>(info[0]).FromJust();
    gs_synclog_siblings(self->c_, us ? gs_sup_server_busy : nullptr, us);
  }

  // state() -> {written, durable, failed (errno, 0 = healthy), syncs, lines, syncUs, maxSyncUs}
  static NAN_METHOD(State) {
    SyncLog *self = Open(info);
    if (!self) return;
    struct gs_synclog_stats st;
    gs_synclog_stats(self->c_, &st);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "written", Num(static_cast<double>(gs_synclog_written(self->c_))));
    Set(o, "durable", Num(static_cast<double>(gs_synclog_durable(self->c_))));
    Set(o, "failed", Num(gs_synclog_failed(self->c_)));
    Set(o, "syncs", Num(static_cast<double>(st.syncs)));
    Set(o, "lines", Num(static_cast<double>(st.lines)));
    Set(o, "syncUs", Num(static_cast<double>(st.sync_ns) / 1000.0));
    Set(o, "maxSyncUs", Num(static_cast<double>(st.max_sync_ns) / 1000.0));
    Set(o, "slowSyncs", Num(static_cast<double>(st.slow_syncs)));
    Set(o, "siblingWaits", Num(static_cast<double>(st.sibling_waits)));
    Set(o, "siblingWaitUs", Num(static_cast<double>(st.sibling_wait_ns) / 1000.0));
    v8::Local<v8::Array> hist = Nan::New<v8::Array>(GS_SYNC_HIST);
    for (uint32_t i = 0; i < GS_SYNC_HIST; i++) Nan::Set(hist, i, Num(static_cast<double>(st.hist[i])));
    Set(o, "hist", hist);
    info.GetReturnValue().Set(o);
  }

  // progress() -> the durable ticket, or -errno once the log failed (one lock; the waiters' wake-up)
  static NAN_METHOD(Progress) {
    SyncLog *self = Open(info);
    if (!self) return;
    int failed = 0;
    uint64_t d = gs_synclog_progress(self->c_, &failed);
    info.GetReturnValue().Set(Num(failed ? -static_cast<double>(failed) : static_cast<double>(d)));
  }

  // testFail(ticket, ms): tests only (gs_synclog_test_fail)
  static NAN_METHOD(TestFail) {
    SyncLog *self = Open(info);
    if (!self) return;
    if (info.Length() < 2 || !info[0]->IsNumber() || !info[1]->IsUint32())
      return Nan::ThrowTypeError("testFail(ticket: number, ms: uint)");
    gs_synclog_test_fail(self->c_, static_cast<uint64_t>(Nan::To<double>(info[0]).FromJust()),
                         Nan::To<uint32_t>(info[1]).FromJust());
  }

  // drain(): write what is queued now, no fdatasync
  static NAN_METHOD(Drain) {
    SyncLog *self = Open(info);
    if (!self) return;
    gs_err err = {};
    if (gs_synclog_drain(self->c_, &err)) return ThrowErr(err);
  }

  static NAN_METHOD(SyncNow) {
    SyncLog *self = Open(info);
    if (!self) return;
    gs_err err = {};
    if (gs_synclog_sync_now(self->c_, &err)) return ThrowErr(err);
  }

  // close(): sync what is written, stop the syncer (the fd stays open)
  static NAN_METHOD(Close) {
    SyncLog *self = Nan::ObjectWrap::Unwrap<SyncLog>(info.Holder());
    if (self->refd_) {
      self->refd_ = false;
      self->Unref();
    }
    self->Shut();
  }

  // ref()/unref(): while somebody in JS awaits durability, keep the event
  // loop alive and be woken after each fdatasync (otherwise only on failure)
  static NAN_METHOD(RefLoop) {
    SyncLog *self = Open(info);
    if (!self || self->refd_) return;
    self->refd_ = true;
    self->Ref();
    gs_synclog_want_wake(self->c_, 1);
    uv_ref(reinterpret_cast<uv_handle_t *>(&self->waker_->h));
  }

  static NAN_METHOD(UnrefLoop) {
    SyncLog *self = Nan::ObjectWrap::Unwrap<SyncLog>(info.Holder());
    if (!self->refd_) return;
    self->refd_ = false;
    if (self->c_) gs_synclog_want_wake(self->c_, 0);
    if (self->waker_) uv_unref(reinterpret_cast<uv_handle_t *>(&self->waker_->h));
    self->Unref();
  }
};

// ---- SupervisorServer ---------------------------------------------------------------

const char *StatusName(int s) {
  switch (s) {
    case GS_RQ_FRAME: return "frame";
    case GS_RQ_PEER_REFUSED: return "unauthenticated_peer";
    case GS_RQ_FRAME_OVERSIZE: return "frame_oversize";
    case GS_RQ_FRAME_TRUNCATED: return "frame_truncated";
    case GS_RQ_FRAME_TIMEOUT: return "frame_timeout";
    case GS_RQ_FRAME_TRAILING: return "frame_trailing";
    case GS_RQ_FRAME_EMPTY: return "frame_empty";
  }
  return "unknown";
}

class SupervisorServer : public Woken<SupervisorServer, gs_sup_server, gs_sup_server_stop> {
 public:
  static void Init(v8::Local<v8::Object> target) {
    gs_nan::DefineClass(target, "SupervisorServer", New,
                        {{"take", Take},
                         {"answer", Answer},
                         {"leaseMap", LeaseMap},
                         {"answerGrant", AnswerGrant},
                         {"takeDone", TakeDone},
                         {"drop", Drop},
                         {"latency", Latency},
                         {"stop", Stop}});
  }

 private:
  Nan::Callback on_ready_;

  static SupervisorServer *Open(const Nan::FunctionCallbackInfo<v8::Value> &info) {
    return Woken::Open(info, "SupervisorServer is stopped");
  }

  // new SupervisorServer(listenFd, ownerUid, cgroupRel, onReady): the I/O thread
  // keeps the event loop alive until stop()
  static NAN_METHOD(New) {
    if (!info.IsConstructCall())
      return Nan::ThrowTypeError("use new SupervisorServer(listenFd, ownerUid, cgroupRel, onReady)");
    if (info.Length() < 4 || !info[0]->IsInt32() || !info[1]->IsUint32() || !info[2]->IsString() ||
        !info[3]->IsFunction())
      return Nan::ThrowTypeError(
          "SupervisorServer(listenFd: int, ownerUid: uint, cgroupRel: string, onReady: function)");
    Nan::Utf8String cg(info[2]);
    SupervisorServer *self = new SupervisorServer();
    self->Wrap(info.This());
    self->on_ready_.Reset(info[3].As<v8::Function>());
    self->waker_ = gs_nan::NewWaker(&self->on_ready_, "gensee:rserver");
    gs_err err = {};
    self->c_ = gs_sup_server_start(Nan::To<int32_t>(info[0]).FromJust(), Nan::To<uint32_t>(info[1]).FromJust(), *cg,
                                   Wake, self->waker_, &err);
    if (!self->c_) {
      CloseWaker(self->waker_);
      return ThrowErr(err);
    }
    self->Ref();  // alive while serving, whatever JS holds
    info.GetReturnValue().Set(info.This());
  }

  // take() -> [{id, status, pid?, uid?, gid?, trailing, detail, body?}]
  static NAN_METHOD(Take) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    v8::Local<v8::Array> out = Nan::New<v8::Array>();
    uint32_t i = 0;
    for (gs_sup_request *r = gs_sup_server_take(self->c_); r;) {
      v8::Local<v8::Object> o = Nan::New<v8::Object>();
      Set(o, "id", Num(static_cast<double>(r->id)));
      Set(o, "status", Nan::New(StatusName(r->status)).ToLocalChecked());
      if (r->has_cred) {
        Set(o, "pid", Num(r->pid));
        Set(o, "uid", Num(r->uid));
        Set(o, "gid", Num(r->gid));
      }
      Set(o, "trailing", Nan::New<v8::Boolean>(r->trailing != 0));
      Set(o, "detail", Nan::New(r->detail).ToLocalChecked());
      if (r->body) {
        // the buffer takes the malloc'ed body over (freed with free())
        Set(o, "body", Nan::NewBuffer(reinterpret_cast<char *>(r->body), r->len).ToLocalChecked());
        r->body = nullptr;
      }
      Nan::Set(out, i++, o);
      gs_sup_request *next = r->next;
      gs_sup_request_free(r);
      r = next;
    }
    info.GetReturnValue().Set(out);
  }

  // answer(id, frame, log: SyncLog | null, ticket, request = true): sent once ticket is durable
  static NAN_METHOD(Answer) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    if (info.Length() < 4 || !info[0]->IsNumber() || !node::Buffer::HasInstance(info[1]) || !info[3]->IsNumber())
      return Nan::ThrowTypeError("answer(id: number, frame: Buffer, log: SyncLog | null, ticket: number)");
    gs_synclog *log = nullptr;
    if (!info[2]->IsNull()) {
      log = SyncLog::From(info[2]);
      if (!log) return;
    }
    uint64_t id = static_cast<uint64_t>(Nan::To<double>(info[0]).FromJust());
    uint64_t ticket = static_cast<uint64_t>(Nan::To<double>(info[3]).FromJust());
    int request = info.Length() < 5 || Nan::To<bool>(info[4]).FromJust();
    if (gs_sup_server_answer(self->c_, id, node::Buffer::Data(info[1]), node::Buffer::Length(info[1]), log, ticket,
                             request)) {
      gs_err err = {};
      gs_errf(&err, errno, "answer", "request %llu", static_cast<unsigned long long>(id));
      return ThrowErr(err);
    }
  }

  // leaseMap(fd): the lease map answerGrant puts into (the server keeps a dup)
  static NAN_METHOD(LeaseMap) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsInt32()) return Nan::ThrowTypeError("leaseMap(fd: int)");
    if (gs_sup_server_lease_map(self->c_, Nan::To<int32_t>(info[0]).FromJust())) {
      gs_err err = {};
      gs_errf(&err, errno, "fcntl", "lease map fd (F_DUPFD_CLOEXEC)");
      return ThrowErr(err);
    }
  }

  // answerGrant(id, frame, log, ticket, key, value, token): once ticket is
  // durable, the lease put and read back, then the answer (sup_server.h);
  // the outcome comes back through takeDone() under token
  static NAN_METHOD(AnswerGrant) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    if (info.Length() < 7 || !info[0]->IsNumber() || !node::Buffer::HasInstance(info[1]) || !info[3]->IsNumber() ||
        !node::Buffer::HasInstance(info[4]) || !node::Buffer::HasInstance(info[5]) || !info[6]->IsNumber())
      return Nan::ThrowTypeError(
          "answerGrant(id: number, frame: Buffer, log: SyncLog, ticket: number, key: Buffer, value: Buffer, token: "
          "number)");
    if (node::Buffer::Length(info[4]) != sizeof(gs_lease_key) ||
        node::Buffer::Length(info[5]) != sizeof(gs_lease_value))
      return Nan::ThrowRangeError("answerGrant: key or value of the wrong size");
    gs_synclog *log = SyncLog::From(info[2]);
    if (!log) return;
    gs_lease_key k;
    gs_lease_value v;
    std::memcpy(&k, node::Buffer::Data(info[4]), sizeof(k));
    std::memcpy(&v, node::Buffer::Data(info[5]), sizeof(v));
    uint64_t id = static_cast<uint64_t>(Nan::To<double>(info[0]).FromJust());
    if (gs_sup_server_answer_grant(self->c_, id, node::Buffer::Data(info[1]), node::Buffer::Length(info[1]), log,
                                   static_cast<uint64_t>(Nan::To<double>(info[3]).FromJust()), &k, &v,
                                   static_cast<uint64_t>(Nan::To<double>(info[6]).FromJust()), 0)) {
      gs_err err = {};
      gs_errf(&err, errno, "answerGrant", "request %llu", static_cast<unsigned long long>(id));
      return ThrowErr(err);
    }
  }

  // takeDone() -> [{token, outcome, errno, detail, back?}]
  static NAN_METHOD(TakeDone) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    v8::Local<v8::Array> out = Nan::New<v8::Array>();
    uint32_t i = 0;
    static const char *names[] = {"installed", "not_durable", "not_installed", "stopped"};
    for (gs_sup_grant_done *d = gs_sup_server_take_done(self->c_); d;) {
      v8::Local<v8::Object> o = Nan::New<v8::Object>();
      Set(o, "token", Num(static_cast<double>(d->token)));
      Set(o, "outcome", Nan::New(d->outcome >= 0 && d->outcome < 4 ? names[d->outcome] : "unknown").ToLocalChecked());
      Set(o, "errno", Num(d->err));
      Set(o, "detail", Nan::New(d->detail).ToLocalChecked());
      if (d->outcome == GS_GRANT_INSTALLED) Set(o, "back", gs_nan::CopyBuffer(&d->back, sizeof(d->back)));
      Nan::Set(out, i++, o);
      gs_sup_grant_done *next = d->next;
      free(d);
      d = next;
    }
    info.GetReturnValue().Set(out);
  }

  static NAN_METHOD(Drop) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsNumber()) return Nan::ThrowTypeError("drop(id: number)");
    gs_sup_server_drop(self->c_, static_cast<uint64_t>(Nan::To<double>(info[0]).FromJust()));
  }

  // latency(reset?) -> {count, p50, p90, p99, p999, max, accepted}: in us, a
  // frame's first byte (accept, for the first) -> answer sent (10 us
  // resolution; 50000 means 50 ms or more); accepted: connections admitted
  // so far, never reset
  static NAN_METHOD(Latency) {
    SupervisorServer *self = Open(info);
    if (!self) return;
    std::vector<uint64_t> h(GS_LAT_BUCKETS);
    gs_sup_server_latency(self->c_, h.data(), info.Length() > 0 && Nan::To<bool>(info[0]).FromJust());
    uint64_t n = 0;
    for (uint64_t c : h) n += c;
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "count", Num(static_cast<double>(n)));
    Set(o, "accepted", Num(static_cast<double>(gs_sup_server_accepted(self->c_))));
    const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    const char *names[] = {"p50", "p90", "p99", "p999", "max"};
    for (int k = 0; k < 5; k++) {
      uint64_t want = n ? static_cast<uint64_t>(qs[k] * static_cast<double>(n - 1)) + 1 : 0, seen = 0;
      int b = 0;
      for (; b < GS_LAT_BUCKETS && n; b++) {
        seen += h[b];
        if (seen >= want) break;
      }
      // the bucket's upper edge: never reports less than it was
      Set(o, names[k], Num(n ? static_cast<double>((b + 1) * GS_LAT_BUCKET_US) : 0));
    }
    info.GetReturnValue().Set(o);
  }

  // stop(): close every connection and join the thread (the listening fd stays the caller's)
  static NAN_METHOD(Stop) {
    SupervisorServer *self = Nan::ObjectWrap::Unwrap<SupervisorServer>(info.Holder());
    if (!self->c_) return;
    self->Shut();
    self->Unref();
  }
};

// ---- submit(): the supervisor client for JavaScript -----------------------

const char *SubmitStatusName(int s) {
  switch (s) {
    case GS_SUB_OK: return "ok";
    case GS_SUB_UNAUTH: return "unauthenticated";
    case GS_SUB_TIMEOUT: return "timeout";
  }
  return "error";
}

struct JsSubmit {
  Nan::Callback cb;
};

// One engine thread for every JS submitter in the process; completions come
// back through one uv_async. The loop is kept alive only while some are in
// flight.
struct ClientHub {
  gs_sup_client *engine = nullptr;
  uv_async_t async;
  std::mutex mu;
  std::vector<gs_submit *> done;
  size_t inflight = 0;
};

ClientHub *hub = nullptr;

void HubDone(gs_submit *req, void *) {
  {
    std::lock_guard<std::mutex> g(hub->mu);
    hub->done.push_back(req);
  }
  uv_async_send(&hub->async);
}

void HubWake(uv_async_t *) {
  std::vector<gs_submit *> batch;
  {
    std::lock_guard<std::mutex> g(hub->mu);
    batch.swap(hub->done);
  }
  Nan::HandleScope scope;
  for (gs_submit *req : batch) {
    JsSubmit *js = static_cast<JsSubmit *>(req->arg);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "status", Nan::New(SubmitStatusName(req->status)).ToLocalChecked());
    Set(o, "errno", Num(req->errnum));
    Set(o, "action", Num(req->action));
    Set(o, "reason", Nan::New(req->reason).ToLocalChecked());
    Set(o, "detail", Nan::New(req->detail).ToLocalChecked());
    Set(o, "micros", Num(static_cast<double>(req->elapsed_ns) / 1000.0));
    if (req->status == GS_SUB_OK) {
      // the Resolution as the client decoded and authenticated it
      v8::Local<v8::Object> r = Nan::New<v8::Object>();
      Set(r, "fault_id", Nan::New(req->res_fault_id).ToLocalChecked());
      Set(r, "action", Num(req->action));
      Set(r, "reason", Nan::New(req->reason).ToLocalChecked());
      if (req->has_lease) {
        v8::Local<v8::Object> l = Nan::New<v8::Object>();
        Set(l, "generation", Big(req->l_generation));
        Set(l, "family", Num(req->l_family));
        Set(l, "protocol", Num(req->l_protocol));
        Set(l, "address", Nan::New(req->l_address).ToLocalChecked());
        Set(l, "port", Num(req->l_port));
        Set(l, "expires_at_boot_ns", Big(req->l_expires));
        Set(l, "max_uses", Num(req->l_max_uses));
        Set(r, "lease", l);
      }
      if (req->has_delegate) Set(r, "delegate_to", Nan::New(req->delegate_to).ToLocalChecked());
      Set(o, "resolution", r);
    }
    if (--hub->inflight == 0) uv_unref(reinterpret_cast<uv_handle_t *>(&hub->async));
    v8::Local<v8::Value> argv[] = {o};
    Nan::AsyncResource res("gensee:submit");
    js->cb.Call(1, argv, &res);
    delete js;
    gs_submit_free(req);
  }
}

bool OptString(v8::Local<v8::Object> o, const char *key, char *out, size_t cap) {
  v8::Local<v8::Value> v;
  if (!Nan::Get(o, Nan::New(key).ToLocalChecked()).ToLocal(&v) || !v->IsString()) {
    Nan::ThrowTypeError((std::string(key) + " must be a string").c_str());
    return false;
  }
  Nan::Utf8String s(v);
  if (static_cast<size_t>(s.length()) >= cap) {
    Nan::ThrowRangeError((std::string(key) + " is too long").c_str());
    return false;
  }
  memcpy(out, *s, s.length());
  out[s.length()] = 0;
  return true;
}

// submit({socketPath, body, faultId, key, expectPid, expectStart, timeoutMs}, cb)
NAN_METHOD(Submit) {
  if (info.Length() < 2 || !info[0]->IsObject() || !info[1]->IsFunction())
    return Nan::ThrowTypeError("submit(opts: object, cb: function)");
  v8::Local<v8::Object> o = info[0].As<v8::Object>();
  gs_submit *req = static_cast<gs_submit *>(calloc(1, sizeof(gs_submit)));
  if (!req) return Nan::ThrowError("out of memory");
  auto bail = [&]() { gs_submit_free(req); };
  if (!OptString(o, "socketPath", req->path, sizeof(req->path)) ||
      !OptString(o, "faultId", req->fault_id, sizeof(req->fault_id)))
    return bail();
  v8::Local<v8::Value> body = Nan::Get(o, Nan::New("body").ToLocalChecked()).ToLocalChecked();
  v8::Local<v8::Value> key = Nan::Get(o, Nan::New("key").ToLocalChecked()).ToLocalChecked();
  if (!node::Buffer::HasInstance(body) || node::Buffer::Length(body) == 0 ||
      node::Buffer::Length(body) > GS_FRAME_MAX) {
    bail();
    return Nan::ThrowTypeError("body must be a Buffer of 1..65536 bytes");
  }
  if (!node::Buffer::HasInstance(key) || node::Buffer::Length(key) != GS_KEY_BYTES) {
    bail();
    return Nan::ThrowTypeError("key must be a 32-byte Buffer");
  }
  req->body_len = node::Buffer::Length(body);
  req->body = static_cast<uint8_t *>(malloc(req->body_len));
  if (!req->body) {
    bail();
    return Nan::ThrowError("out of memory");
  }
  memcpy(req->body, node::Buffer::Data(body), req->body_len);
  memcpy(req->key, node::Buffer::Data(key), GS_KEY_BYTES);
  v8::Local<v8::Value> v = Nan::Get(o, Nan::New("expectPid").ToLocalChecked()).ToLocalChecked();
  req->expect_pid = v->IsInt32() ? Nan::To<int32_t>(v).FromJust() : 0;
  v = Nan::Get(o, Nan::New("expectStart").ToLocalChecked()).ToLocalChecked();
  if (v->IsBigInt())
    req->expect_start = v.As<v8::BigInt>()->Uint64Value();
  else if (v->IsNumber())
    req->expect_start = static_cast<uint64_t>(Nan::To<double>(v).FromJust());
  v = Nan::Get(o, Nan::New("timeoutMs").ToLocalChecked()).ToLocalChecked();
  req->timeout_ms = v->IsUint32() && Nan::To<uint32_t>(v).FromJust() > 0 ? Nan::To<uint32_t>(v).FromJust() : 5000;
  if (!hub) {
    gs_err err = {};
    gs_sup_client *engine = gs_sup_client_start(&err);
    if (!engine) {
      bail();
      return ThrowErr(err);
    }
    hub = new ClientHub();
    hub->engine = engine;
    uv_async_init(Nan::GetCurrentEventLoop(), &hub->async, HubWake);
    uv_unref(reinterpret_cast<uv_handle_t *>(&hub->async));
  }
  JsSubmit *js = new JsSubmit();
  js->cb.Reset(info[1].As<v8::Function>());
  req->done = HubDone;
  req->arg = js;
  if (hub->inflight++ == 0) uv_ref(reinterpret_cast<uv_handle_t *>(&hub->async));
  gs_sup_client_submit(hub->engine, req);
}

// ---- /proc readers for the resolver's subject checks -----------------------

// procStartTime(pid) -> field 22 of /proc/PID/stat, or null if gone
NAN_METHOD(ProcStartTime) {
  if (info.Length() < 1 || !info[0]->IsUint32()) return Nan::ThrowTypeError("procStartTime(pid: uint)");
  uint64_t v;
  if (gs_proc_start_time(Nan::To<uint32_t>(info[0]).FromJust(), &v)) return info.GetReturnValue().SetNull();
  info.GetReturnValue().Set(Num(static_cast<double>(v)));
}

// subject(pid) -> {start, cgroup} of the process now (cached behind a pidfd,
// subject.c), or null if it is gone. Main thread only.
NAN_METHOD(Subject) {
  static gs_subject_cache *cache = gs_subject_cache_new();
  if (info.Length() < 1 || !info[0]->IsUint32()) return Nan::ThrowTypeError("subject(pid: uint)");
  if (!cache) return Nan::ThrowError("out of memory");
  uint64_t start;
  char cg[4096];
  if (gs_subject_lookup(cache, Nan::To<uint32_t>(info[0]).FromJust(), &start, cg, sizeof(cg)))
    return info.GetReturnValue().SetNull();
  v8::Local<v8::Object> o = Nan::New<v8::Object>();
  Set(o, "start", Num(static_cast<double>(start)));
  Set(o, "cgroup", Nan::New(cg).ToLocalChecked());
  info.GetReturnValue().Set(o);
}

// procCgroup(pid) -> "/gensee/op" (the 0:: line of /proc/PID/cgroup), or null
NAN_METHOD(ProcCgroup) {
  if (info.Length() < 1 || !info[0]->IsUint32()) return Nan::ThrowTypeError("procCgroup(pid: uint)");
  char buf[4096];
  if (gs_proc_cgroup(Nan::To<uint32_t>(info[0]).FromJust(), buf, sizeof(buf))) return info.GetReturnValue().SetNull();
  info.GetReturnValue().Set(Nan::New(buf).ToLocalChecked());
}

// findCgroup2Mount(mountinfo) -> the cgroup2 mount point (proc.c), or null
NAN_METHOD(FindCgroup2Mount) {
  if (info.Length() < 1 || !info[0]->IsString()) return Nan::ThrowTypeError("findCgroup2Mount(mountinfo: string)");
  Nan::Utf8String file(info[0]);
  char buf[4096];
  if (gs_find_cgroup2(*file, buf, sizeof(buf))) return info.GetReturnValue().SetNull();
  info.GetReturnValue().Set(Nan::New(buf).ToLocalChecked());
}

// cgroupWithin(have, want) -> is the /proc/PID/cgroup path have want or below it (subject.c)
NAN_METHOD(CgroupWithin) {
  if (info.Length() < 2 || !info[0]->IsString() || !info[1]->IsString())
    return Nan::ThrowTypeError("cgroupWithin(have: string, want: string)");
  Nan::Utf8String have(info[0]), want(info[1]);
  info.GetReturnValue().Set(gs_cgroup_within(*have, *want) != 0);
}

}  // namespace

void InitSupervisorSocket(v8::Local<v8::Object> target) {
  SyncLog::Init(target);
  SupervisorServer::Init(target);
  gs_nan::SetMethods(target, {{"submit", Submit},
                              {"procStartTime", ProcStartTime},
                              {"procCgroup", ProcCgroup},
                              {"subject", Subject},
                              {"findCgroup2Mount", FindCgroup2Mount},
                              {"cgroupWithin", CgroupWithin}});
}
