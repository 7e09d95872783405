// SPDX-License-Identifier: Apache-2.0
// nan glue for pause mode: the seccomp Notifier, fd passing, FdWatcher.
// Argument checking, object building and errno exceptions only; the logic
// lives in notify.c and fdpass.c.
#include <nan.h>
#include <cerrno>
#include <cstring>
#include <string>
#include <netinet/in.h>
#include <fcntl.h>
#include <unistd.h>
#include "notify.h"
#include "fdpass.h"
#include "sup_client.h"
#include "gensee/v2/fault.pb-c.h"
#include "nan_util.h"
#include <atomic>
#include <mutex>
#include <vector>

namespace {

using gs_nan::Big;
using gs_nan::ClosePoll;
using gs_nan::ErrValue;
using gs_nan::Get;
using gs_nan::Set;
using gs_nan::StringArg;
using gs_nan::ThrowErr;

bool FdArg(const Nan::FunctionCallbackInfo<v8::Value> &info, int i, const char *name, int *out) {
  if (info.Length() <= i || !info[i]->IsInt32() || Nan::To<int32_t>(info[i]).FromJust() < 0) {
    Nan::ThrowTypeError((std::string(name) + " must be a non-negative integer fd").c_str());
    return false;
  }
  *out = Nan::To<int32_t>(info[i]).FromJust();
  return true;
}

const char *SyscallName(int s) {
  switch (s) {
    case GS_NSYS_CONNECT: return "connect";
    case GS_NSYS_SENDTO: return "sendto";
    case GS_NSYS_SENDMSG: return "sendmsg";
    case GS_NSYS_SENDMMSG: return "sendmmsg";
    case GS_NSYS_SOCKET: return "socket";
    case GS_NSYS_SOCKETPAIR: return "socketpair";
    case GS_NSYS_IO_URING_SETUP: return "io_uring_setup";
    case GS_NSYS_LISTEN: return "listen";
  }
  return "unknown";
}

// ---- Notifier ----------------------------------------------------------
//
// The listener is polled on a thread of its own (gs_notifier_run): the fast
// path never touches the event loop. Paused calls without a lease go, once
// setSupervisorClient() is called, straight from that thread to the supervisor
// socket through the C client (sup_client.c) and are answered from its thread the
// moment an authenticated Resolution arrives; JavaScript hears of each one
// afterwards (onAnswered), for output and evidence of timeouts. Until
// setSupervisorClient() is called they are raised to onFault.

struct SupervisorConfig {
  char path[108];
  uint8_t key[GS_KEY_BYTES];
  int32_t pid;
  uint64_t start;
  uint32_t deadline_ms;
  int deny, delegate, timeout;  // errnos, from src/pause/notifier.ts REFUSAL_ERRNO
};

struct NotifyEvent {
  enum Kind { FAULT, ANSWERED, STOPPED } kind;
  gs_fault_info f;  // FAULT: with its fault buffer; ANSWERED: without
  // ANSWERED
  int status = 0, action = 0, verdict = 0;
  bool delivered = false;
  std::string reason, detail;
  double micros = 0;
  // STOPPED
  bool has_err = false;
  gs_err err = {};
};

// Shared with the loop and client threads; lives until its handle's close callback.
struct NotifyCore {
  uv_async_t async;
  void *owner = nullptr;  // the Notifier, null once closed
  gs_notifier *n = nullptr;
  std::mutex mu;
  std::vector<NotifyEvent> events;
  gs_sup_client *sup = nullptr;
  SupervisorConfig cfg = {};
  std::atomic<size_t> inflight{0};

  void Push(NotifyEvent &&e) {
    {
      std::lock_guard<std::mutex> g(mu);
      events.push_back(std::move(e));
    }
    uv_async_send(&async);
  }
};

struct SupervisorCall {
  NotifyCore *core;
  gs_fault_info f;
};

// What a paused call gets for its submission's outcome: 0 lets it through
// (CONTINUE: the hook re-checks), else the errno it fails with. The
// TypeScript twin is src/pause/adapter.ts verdictFor (answers given from the
// event loop); test/twins.test.ts holds the two to the same answers.
int VerdictOf(int status, int action, const SupervisorConfig &cfg) {
  switch (status) {
    case GS_SUB_OK:
      switch (action) {
        case GENSEE__V2__ACTION__ACTION_CONTINUE_ALREADY_AUTHORIZED:
        case GENSEE__V2__ACTION__ACTION_RETRY_AFTER_LEASE: return 0;
        case GENSEE__V2__ACTION__ACTION_DELEGATE: return cfg.delegate;
        default: return cfg.deny;
      }
    case GS_SUB_TIMEOUT: return cfg.timeout;
    default: return cfg.deny;  // unauthenticated, or no resolver: fail closed
  }
}

// supervisor-client thread (or the closing one): answer the paused call, then tell JS
void SupervisorDone(gs_submit *req, void *arg) {
  SupervisorCall *cc = static_cast<SupervisorCall *>(arg);
  NotifyCore *core = cc->core;
  int verdict = VerdictOf(req->status, req->action, core->cfg);
  gs_err err = {};
  int r = gs_notifier_respond(core->n, cc->f.id, verdict, &err);
  NotifyEvent e;
  e.kind = NotifyEvent::ANSWERED;
  e.f = cc->f;
  e.status = req->status;
  e.action = req->action;
  e.verdict = verdict;
  e.delivered = r == 1;
  e.reason = req->reason;
  e.detail = req->detail;
  e.micros = static_cast<double>(req->elapsed_ns) / 1000.0;
  core->Push(std::move(e));
  gs_submit_free(req);
  delete cc;
}

// loop thread: a paused call without a lease
void LoopFault(void *ctx, gs_fault_info *f) {
  NotifyCore *core = static_cast<NotifyCore *>(ctx);
  gs_sup_client *sup;
  {
    std::lock_guard<std::mutex> g(core->mu);
    sup = core->sup;
  }
  if (sup) {
    gs_submit *req = static_cast<gs_submit *>(calloc(1, sizeof(gs_submit)));
    SupervisorCall *cc = req ? new SupervisorCall{core, *f} : nullptr;
    if (cc) {
      cc->f.fault = nullptr;
      memcpy(req->path, core->cfg.path, sizeof(req->path));
      memcpy(req->key, core->cfg.key, sizeof(req->key));
      snprintf(req->fault_id, sizeof(req->fault_id), "%s", f->fault_id);
      req->body = f->fault;  // the client frees it
      req->body_len = f->fault_len;
      req->expect_pid = core->cfg.pid;
      req->expect_start = core->cfg.start;
      req->timeout_ms = core->cfg.deadline_ms;
      req->keep = 1;  // one connection to the resolver for successive faults
      req->done = SupervisorDone;
      req->arg = cc;
      core->inflight++;
      gs_sup_client_submit(sup, req);
      return;
    }
    free(req);
  }
  NotifyEvent e;
  e.kind = NotifyEvent::FAULT;
  e.f = *f;
  core->Push(std::move(e));
}

void LoopStopped(void *ctx, const gs_err *err) {
  NotifyCore *core = static_cast<NotifyCore *>(ctx);
  NotifyEvent e;
  e.kind = NotifyEvent::STOPPED;
  if (err) {
    e.has_err = true;
    e.err = *err;
  }
  core->Push(std::move(e));
}

class Notifier : public Nan::ObjectWrap {
 public:
  static void Init(v8::Local<v8::Object> target) {
    gs_nan::DefineClass(target, "Notifier", New,
                        {{"respond", Respond},
                         {"setSupervisorClient", SetSupervisorClient},
                         {"supervisorInflight", SupervisorInflight},
                         {"stats", Stats},
                         {"takeRefusals", TakeRefusals},
                         {"close", Close},
                         {"ref", RefLoop},
                         {"unref", UnrefLoop}});
  }

 private:
  NotifyCore *core_ = nullptr;
  bool running_ = false;  // the loop thread runs (and keeps us alive)
  Nan::Callback on_fault_;
  Nan::Callback on_stop_;
  Nan::Callback on_answered_;
  gs_notify_stats last_ = {};  // kept for stats() after close
  size_t last_pending_ = 0;

  ~Notifier() override { Shutdown(EACCES, false); }

  gs_notifier *N() const { return core_ ? core_->n : nullptr; }

  // Stop the loop thread, then the client (its cancelled calls are refused
  // with errnum), then refuse whatever is still pending and close.
  size_t Shutdown(int errnum, bool deliver) {
    if (!core_ || !core_->n) return 0;
    gs_notifier_halt(core_->n);
    if (core_->sup) {
      core_->cfg.deny = errnum;
      core_->cfg.timeout = errnum;
      gs_sup_client_stop(core_->sup);  // runs SupervisorDone for each call in flight
      std::lock_guard<std::mutex> g(core_->mu);
      core_->sup = nullptr;
    }
    gs_notifier_stats(core_->n, &last_);
    size_t answered = gs_notifier_close(core_->n, errnum);
    core_->n = nullptr;
    last_.refused += answered;
    last_pending_ = 0;
    if (deliver) Deliver(true);
    NotifyCore *core = core_;
    core_ = nullptr;
    core->owner = nullptr;
    uv_close(reinterpret_cast<uv_handle_t *>(&core->async),
             [](uv_handle_t *h) { delete static_cast<NotifyCore *>(h->data); });
    if (running_) {
      running_ = false;
      Unref();
    }
    return answered;
  }

  v8::Local<v8::Object> FaultObject(const gs_fault_info &f) {
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "id", Big(f.id));
    Set(o, "pid", Nan::New<v8::Number>(f.pid));
    if (f.tgid) Set(o, "tgid", Nan::New<v8::Number>(f.tgid));
    Set(o, "syscall", Nan::New(SyscallName(f.syscall)).ToLocalChecked());
    Set(o, "family", Nan::New(f.key.family == GS_FAMILY_IPV4 ? "ipv4" : "ipv6").ToLocalChecked());
    Set(o, "protocol", Nan::New(f.key.protocol == IPPROTO_TCP ? "tcp" : "udp").ToLocalChecked());
    Set(o, "address", Nan::New(f.address).ToLocalChecked());
    Set(o, "port", Nan::New<v8::Number>(f.key.port));
    Set(o, "startTimeTicks", Big(f.start_time_ticks));
    Set(o, "observedAtBootNs", Big(f.observed_at_boot_ns));
    Set(o, "cgroupId", Big(f.cgroup_id));
    Set(o, "faultId", Nan::New(f.fault_id).ToLocalChecked());
    if (f.fault)
      Set(o, "fault", Nan::CopyBuffer(reinterpret_cast<const char *>(f.fault), f.fault_len).ToLocalChecked());
    Set(o, "leaseKey", Nan::CopyBuffer(reinterpret_cast<const char *>(&f.key), sizeof(f.key)).ToLocalChecked());
    return o;
  }

  static void OnAsync(uv_async_t *h) {
    NotifyCore *core = static_cast<NotifyCore *>(h->data);
    Notifier *self = static_cast<Notifier *>(core->owner);
    if (!self) return;
    Nan::HandleScope scope;
    self->Ref();  // JS may close() and drop us from inside a callback
    self->Deliver(false);
    self->Unref();
  }

  // Hand queued events to JS (closing: answers only; faults were refused by close).
  void Deliver(bool closing) {
    NotifyCore *core = core_;
    if (!core) return;
    std::vector<NotifyEvent> batch;
    {
      std::lock_guard<std::mutex> g(core->mu);
      batch.swap(core->events);
    }
    for (NotifyEvent &e : batch) {
      if (e.kind == NotifyEvent::FAULT) {
        if (!closing && core_ && !on_fault_.IsEmpty()) {
          v8::Local<v8::Value> argv[] = {FaultObject(e.f)};
          Nan::AsyncResource res("gensee:fault");
          on_fault_.Call(1, argv, &res);  // may call respond() or close()
        }
        free(e.f.fault);
      } else if (e.kind == NotifyEvent::ANSWERED) {
        core->inflight--;
        if (on_answered_.IsEmpty()) continue;
        v8::Local<v8::Object> o = Nan::New<v8::Object>();
        static const char *names[] = {"ok", "unauthenticated", "timeout", "error"};
        Set(o, "status", Nan::New(names[e.status >= 0 && e.status <= 3 ? e.status : 3]).ToLocalChecked());
        Set(o, "action", Nan::New<v8::Number>(e.action));
        Set(o, "reason", Nan::New(e.reason).ToLocalChecked());
        Set(o, "detail", Nan::New(e.detail).ToLocalChecked());
        Set(o, "verdict",
            e.verdict ? Nan::New<v8::Number>(e.verdict).As<v8::Value>()
                      : Nan::New("continue").ToLocalChecked().As<v8::Value>());
        Set(o, "delivered", Nan::New<v8::Boolean>(e.delivered));
        Set(o, "micros", Nan::New<v8::Number>(e.micros));
        v8::Local<v8::Value> argv[] = {FaultObject(e.f), o};
        Nan::AsyncResource res("gensee:answered");
        on_answered_.Call(2, argv, &res);
      } else if (!closing) {
        if (running_) {
          running_ = false;
          uv_unref(reinterpret_cast<uv_handle_t *>(&core->async));
          Unref();
        }
        if (!on_stop_.IsEmpty()) {
          Nan::Callback cb(on_stop_.GetFunction());
          on_stop_.Reset();
          v8::Local<v8::Value> argv[] = {e.has_err ? ErrValue(e.err) : Nan::Undefined().As<v8::Value>()};
          Nan::AsyncResource res("gensee:notifier");
          cb.Call(1, argv, &res);
        }
      }
      if (!core_) {
        closing = true;  // closed from a callback: answers only from here on
      }
    }
  }

  static Notifier *Open(const Nan::FunctionCallbackInfo<v8::Value> &info) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    return gs_nan::IfOpen(self, self->N() != nullptr, "Notifier is closed");
  }

  // new Notifier(listenerFd, leasesPinPath, onFault, {operationId?, onStop?})
  static NAN_METHOD(New) {
    if (!info.IsConstructCall()) return Nan::ThrowTypeError("use new Notifier(listenerFd, leasesPinPath, onFault)");
    int fd;
    std::string pin, op;
    if (!FdArg(info, 0, "listenerFd", &fd) || !StringArg(info, 1, "leasesPinPath", &pin)) return;
    if (info.Length() < 3 || !info[2]->IsFunction()) return Nan::ThrowTypeError("onFault must be a function");
    v8::Local<v8::Value> on_stop = Nan::Undefined();
    if (info.Length() > 3 && info[3]->IsObject()) {
      v8::Local<v8::Object> o = info[3].As<v8::Object>();
      v8::Local<v8::Value> v = Get(o, "operationId");
      if (v->IsString()) {
        Nan::Utf8String s(v);
        op = std::string(*s, s.length());
      } else if (!v->IsUndefined()) {
        return Nan::ThrowTypeError("operationId must be a string");
      }
      on_stop = Get(o, "onStop");
      if (!on_stop->IsUndefined() && !on_stop->IsFunction()) return Nan::ThrowTypeError("onStop must be a function");
    }
    gs_notify_opts opts = {op.c_str()};
    gs_err err = {};
    // The notifier works on its own copy of the fd: whatever fails below, the
    // caller's fd is still the caller's to close; on success it is closed here.
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0) return Nan::ThrowError(Nan::ErrnoException(errno, "fcntl", "F_DUPFD_CLOEXEC of the listener fd"));
    gs_notifier *n = gs_notifier_open(own, pin.c_str(), &opts, &err);
    if (!n) {
      close(own);
      return ThrowErr(err);
    }

    Notifier *self = new Notifier();
    NotifyCore *core = new NotifyCore();
    core->n = n;
    core->owner = self;
    core->async.data = core;
    uv_async_init(Nan::GetCurrentEventLoop(), &core->async, OnAsync);
    self->core_ = core;
    self->on_fault_.Reset(info[2].As<v8::Function>());
    if (on_stop->IsFunction()) self->on_stop_.Reset(on_stop.As<v8::Function>());
    self->Wrap(info.This());
    gs_notify_loop loop = {LoopFault, LoopStopped, core};
    if (gs_notifier_run(n, &loop, &err)) {
      self->Shutdown(EACCES, false);  // closes our copy with the notifier
      err.errnum = err.errnum ? err.errnum : EIO;
      return ThrowErr(err);
    }
    close(fd);
    self->running_ = true;
    self->Ref();  // alive while polling
    Set(info.This(), "syncWakeUp", Nan::New<v8::Boolean>(gs_notifier_sync_wake_up(n) == 1));
    Set(info.This(), "pidfdThread", Nan::New<v8::Boolean>(gs_notifier_pidfd_thread(n) == 1));
    Set(info.This(), "fd", Nan::New<v8::Number>(gs_notifier_fd(n)));
    info.GetReturnValue().Set(info.This());
  }

  // setSupervisorClient({socketPath, key, resolverPid, resolverStart, deadlineMs, errnos: {deny, delegate, timeout}}, onAnswered)
  static NAN_METHOD(SetSupervisorClient) {
    Notifier *self = Open(info);
    if (!self) return;
    if (info.Length() < 2 || !info[0]->IsObject() || !info[1]->IsFunction())
      return Nan::ThrowTypeError("setSupervisorClient(opts: object, onAnswered: function)");
    if (self->core_->sup) return Nan::ThrowError("the supervisor client is set already");
    v8::Local<v8::Object> o = info[0].As<v8::Object>();
    SupervisorConfig cfg = {};
    v8::Local<v8::Value> path = Get(o, "socketPath"), key = Get(o, "key"), errnos = Get(o, "errnos");
    if (!path->IsString() || static_cast<size_t>(Nan::Utf8String(path).length()) >= sizeof(cfg.path))
      return Nan::ThrowTypeError("socketPath must be a string shorter than 108 bytes");
    snprintf(cfg.path, sizeof(cfg.path), "%s", *Nan::Utf8String(path));
    if (!node::Buffer::HasInstance(key) || node::Buffer::Length(key) != GS_KEY_BYTES)
      return Nan::ThrowTypeError("key must be a 32-byte Buffer");
    memcpy(cfg.key, node::Buffer::Data(key), GS_KEY_BYTES);
    v8::Local<v8::Value> v = Get(o, "resolverPid");
    cfg.pid = v->IsInt32() ? Nan::To<int32_t>(v).FromJust() : 0;
    v = Get(o, "resolverStart");
    cfg.start = v->IsBigInt()   ? v.As<v8::BigInt>()->Uint64Value()
                : v->IsNumber() ? static_cast<uint64_t>(Nan::To<double>(v).FromJust())
                                : 0;
    v = Get(o, "deadlineMs");
    if (!v->IsUint32() || Nan::To<uint32_t>(v).FromJust() == 0)
      return Nan::ThrowTypeError("deadlineMs must be a positive integer");
    cfg.deadline_ms = Nan::To<uint32_t>(v).FromJust();
    if (!errnos->IsObject()) return Nan::ThrowTypeError("errnos must be {deny, delegate, timeout}");
    v8::Local<v8::Object> eo = errnos.As<v8::Object>();
    int *dst[] = {&cfg.deny, &cfg.delegate, &cfg.timeout};
    const char *names[] = {"deny", "delegate", "timeout"};
    for (int i = 0; i < 3; i++) {
      v8::Local<v8::Value> x = Get(eo, names[i]);
      if (!x->IsInt32() || Nan::To<int32_t>(x).FromJust() <= 0 || Nan::To<int32_t>(x).FromJust() >= 4096)
        return Nan::ThrowTypeError((std::string("errnos.") + names[i] + " must be a positive errno").c_str());
      *dst[i] = Nan::To<int32_t>(x).FromJust();
    }
    gs_err err = {};
    gs_sup_client *sup = gs_sup_client_start(&err);
    if (!sup) return ThrowErr(err);
    self->on_answered_.Reset(info[1].As<v8::Function>());
    std::lock_guard<std::mutex> g(self->core_->mu);
    self->core_->cfg = cfg;
    self->core_->sup = sup;
  }

  // supervisorInflight() -> paused calls submitted through the supervisor client and not yet reported
  static NAN_METHOD(SupervisorInflight) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    info.GetReturnValue().Set(
        Nan::New<v8::Number>(self->core_ ? static_cast<double>(self->core_->inflight.load()) : 0));
  }

  // respond(id: bigint, verdict: 'continue' | errno) → true answered, false gone
  static NAN_METHOD(Respond) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    if (info.Length() < 1 || !info[0]->IsBigInt()) return Nan::ThrowTypeError("id must be a bigint");
    bool lossless = true;
    uint64_t id = info[0].As<v8::BigInt>()->Uint64Value(&lossless);
    if (!lossless) return Nan::ThrowRangeError("id out of range");
    int errnum;
    if (info.Length() > 1 && info[1]->IsString() && *Nan::Utf8String(info[1]) == std::string("continue")) {
      errnum = 0;
    } else if (info.Length() > 1 && info[1]->IsInt32() && Nan::To<int32_t>(info[1]).FromJust() > 0 &&
               Nan::To<int32_t>(info[1]).FromJust() < 4096) {
      errnum = Nan::To<int32_t>(info[1]).FromJust();
    } else {
      return Nan::ThrowTypeError("verdict must be 'continue' or a positive errno");
    }
    // after close() every pending call has already been refused
    if (!self->N()) return info.GetReturnValue().Set(Nan::False());
    gs_err err = {};
    int r = gs_notifier_respond(self->N(), id, errnum, &err);
    if (r < 0) return ThrowErr(err);
    info.GetReturnValue().Set(Nan::New<v8::Boolean>(r == 1));
  }

  static NAN_METHOD(Stats) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    gs_notify_stats st = self->last_;
    size_t pending = self->last_pending_;
    if (self->N()) {
      gs_notifier_stats(self->N(), &st);
      pending = gs_notifier_pending(self->N());
    }
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "fastPath", Nan::New<v8::Number>(static_cast<double>(st.fast_path)));
    Set(o, "slowPath", Nan::New<v8::Number>(static_cast<double>(st.slow_path)));
    Set(o, "passthrough", Nan::New<v8::Number>(static_cast<double>(st.passthrough)));
    Set(o, "uninspectable", Nan::New<v8::Number>(static_cast<double>(st.uninspectable)));
    Set(o, "gone", Nan::New<v8::Number>(static_cast<double>(st.gone)));
    Set(o, "continued", Nan::New<v8::Number>(static_cast<double>(st.continued)));
    Set(o, "refused", Nan::New<v8::Number>(static_cast<double>(st.refused)));
    Set(o, "pending", Nan::New<v8::Number>(static_cast<double>(pending)));
    Set(o, "filtered", Nan::New<v8::Number>(static_cast<double>(st.filtered)));
    Set(o, "filteredLost", Nan::New<v8::Number>(static_cast<double>(st.filtered_lost)));
    Set(o, "viaLeader", Nan::New<v8::Number>(static_cast<double>(st.via_leader)));
    Set(o, "polling", Nan::New<v8::Boolean>(self->running_));
    info.GetReturnValue().Set(o);
  }

  // takeRefusals() -> [{pid, syscall, errno, args: [a0, a1, a2], count, bootNs}]: the calls the
  // filter sent only to be refused, answered in C, oldest first; [] once closed
  static NAN_METHOD(TakeRefusals) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    v8::Local<v8::Array> arr = Nan::New<v8::Array>();
    if (!self->N()) return info.GetReturnValue().Set(arr);
    std::vector<gs_refusal> buf(GS_REFUSALS_MAX);
    size_t k = gs_notifier_take_refusals(self->N(), buf.data(), buf.size());
    for (size_t i = 0; i < k; i++) {
      const gs_refusal &r = buf[i];
      v8::Local<v8::Object> o = Nan::New<v8::Object>();
      Set(o, "pid", Nan::New<v8::Number>(r.pid));
      Set(o, "syscall", Nan::New(SyscallName(r.syscall)).ToLocalChecked());
      Set(o, "errno", Nan::New<v8::Number>(r.errnum));
      v8::Local<v8::Array> args = Nan::New<v8::Array>(3);
      for (uint32_t j = 0; j < 3; j++) Nan::Set(args, j, Big(r.args[j]));
      Set(o, "args", args);
      Set(o, "count", Nan::New<v8::Number>(static_cast<double>(r.count)));
      Set(o, "bootNs", Big(r.boot_ns));
      Nan::Set(arr, static_cast<uint32_t>(i), o);
    }
    info.GetReturnValue().Set(arr);
  }

  // close(errno = EACCES): refuse every pending call, stop, close the fd.
  static NAN_METHOD(Close) {
    Notifier *self = Nan::ObjectWrap::Unwrap<Notifier>(info.Holder());
    int errnum = EACCES;
    if (info.Length() > 0 && !info[0]->IsUndefined()) {
      if (!info[0]->IsInt32() || Nan::To<int32_t>(info[0]).FromJust() <= 0 ||
          Nan::To<int32_t>(info[0]).FromJust() >= 4096)
        return Nan::ThrowTypeError("errno must be a positive integer");
      errnum = Nan::To<int32_t>(info[0]).FromJust();
    }
    if (!self->N()) return info.GetReturnValue().Set(0);
    self->on_stop_.Reset();
    size_t answered = self->Shutdown(errnum, true);
    info.GetReturnValue().Set(Nan::New<v8::Number>(static_cast<double>(answered)));
  }

  static NAN_METHOD(RefLoop) {
    Notifier *self = Open(info);
    if (self && self->running_) uv_ref(reinterpret_cast<uv_handle_t *>(&self->core_->async));
  }

  static NAN_METHOD(UnrefLoop) {
    Notifier *self = Open(info);
    if (self && self->running_) uv_unref(reinterpret_cast<uv_handle_t *>(&self->core_->async));
  }
};

// ---- FdWatcher: readiness of any fd, for accept()/recvFd() ---------------

class FdWatcher : public Nan::ObjectWrap {
 public:
  static void Init(v8::Local<v8::Object> target) {
    gs_nan::DefineClass(target, "FdWatcher", New, {{"stop", Stop}, {"unref", UnrefLoop}});
  }

 private:
  uv_poll_t *poll_ = nullptr;
  Nan::Callback cb_;

  ~FdWatcher() override { ClosePoll(poll_); }

  void Halt() {
    if (!poll_) return;
    ClosePoll(poll_);
    cb_.Reset();
    Unref();
  }

  static void OnPoll(uv_poll_t *h, int status, int events) {
    FdWatcher *self = static_cast<FdWatcher *>(h->data);
    Nan::HandleScope scope;
    v8::Local<v8::Value> argv[2];
    if (status < 0) {
      argv[0] = Nan::ErrnoException(-status, "uv_poll", uv_strerror(status), "");
      argv[1] = Nan::Undefined();
    } else {
      v8::Local<v8::Object> ev = Nan::New<v8::Object>();
      Set(ev, "readable", Nan::New<v8::Boolean>((events & UV_READABLE) != 0));
      Set(ev, "hangup", Nan::New<v8::Boolean>((events & UV_DISCONNECT) != 0));
      argv[0] = Nan::Null();
      argv[1] = ev;
    }
    Nan::Callback cb(self->cb_.GetFunction());
    if (status < 0) self->Halt();  // an errored poll handle reports nothing more
    Nan::AsyncResource res("gensee:fdwatch");
    cb.Call(2, argv, &res);
  }

  // new FdWatcher(fd, cb(err, {readable, hangup})): level-triggered, so the
  // callback must consume what is ready or stop() the watcher.
  static NAN_METHOD(New) {
    if (!info.IsConstructCall()) return Nan::ThrowTypeError("use new FdWatcher(fd, cb)");
    int fd;
    if (!FdArg(info, 0, "fd", &fd)) return;
    if (info.Length() < 2 || !info[1]->IsFunction()) return Nan::ThrowTypeError("cb must be a function");
    FdWatcher *self = new FdWatcher();
    int r = gs_nan::StartPoll(&self->poll_, fd, UV_READABLE | UV_DISCONNECT, self, OnPoll);
    if (r) {
      delete self;
      return Nan::ThrowError(
          Nan::ErrnoException(-r, "uv_poll_start", uv_strerror(r), ("fd " + std::to_string(fd)).c_str()));
    }
    self->cb_.Reset(info[1].As<v8::Function>());
    self->Wrap(info.This());
    self->Ref();
    info.GetReturnValue().Set(info.This());
  }

  static NAN_METHOD(Stop) { Nan::ObjectWrap::Unwrap<FdWatcher>(info.Holder())->Halt(); }

  static NAN_METHOD(UnrefLoop) {
    FdWatcher *self = Nan::ObjectWrap::Unwrap<FdWatcher>(info.Holder());
    if (self->poll_) uv_unref(reinterpret_cast<uv_handle_t *>(self->poll_));
  }
};

// ---- fd functions --------------------------------------------------------

NAN_METHOD(SocketPair) {
  int sv[2];
  gs_err err = {};
  if (gs_socketpair(sv, &err)) return ThrowErr(err);
  v8::Local<v8::Array> a = Nan::New<v8::Array>(2);
  Nan::Set(a, 0, Nan::New<v8::Number>(sv[0]));
  Nan::Set(a, 1, Nan::New<v8::Number>(sv[1]));
  info.GetReturnValue().Set(a);
}

// recvFd(fd, timeoutMs, {untilEof?, maxBytes?}) → {fd, data} | null (peer closed)
NAN_METHOD(RecvFd) {
  int fd;
  if (!FdArg(info, 0, "fd", &fd)) return;
  if (info.Length() < 2 || !info[1]->IsInt32())
    return Nan::ThrowTypeError("timeoutMs must be an integer (-1 = forever)");
  int timeout = Nan::To<int32_t>(info[1]).FromJust();
  int until_eof = 0;
  size_t max_bytes = 65536;
  if (info.Length() > 2 && info[2]->IsObject()) {
    v8::Local<v8::Object> o = info[2].As<v8::Object>();
    until_eof = Nan::To<bool>(Get(o, "untilEof")).FromMaybe(false);
    v8::Local<v8::Value> mb = Get(o, "maxBytes");
    if (mb->IsUint32() && Nan::To<uint32_t>(mb).FromJust() > 0) max_bytes = Nan::To<uint32_t>(mb).FromJust();
  }
  int got_fd = -1;
  uint8_t *data = nullptr;
  size_t len = 0;
  gs_err err = {};
  int r = gs_recv_fd(fd, timeout, until_eof, max_bytes, &got_fd, &data, &len, &err);
  if (r < 0) return ThrowErr(err);
  if (r == 0) return info.GetReturnValue().SetNull();
  v8::Local<v8::Object> o = Nan::New<v8::Object>();
  Set(o, "fd", Nan::New<v8::Number>(got_fd));
  Set(o, "data", Nan::CopyBuffer(reinterpret_cast<const char *>(data), len).ToLocalChecked());
  free(data);
  info.GetReturnValue().Set(o);
}

// sendFd(sock, fds: number[], data?: Buffer) → bytes sent
NAN_METHOD(SendFd) {
  int sock;
  if (!FdArg(info, 0, "sock", &sock)) return;
  if (info.Length() < 2 || !info[1]->IsArray()) return Nan::ThrowTypeError("fds must be an array of fds");
  v8::Local<v8::Array> a = info[1].As<v8::Array>();
  int fds[8];
  size_t n = a->Length();
  if (n > 8) return Nan::ThrowRangeError("at most 8 fds");
  for (size_t i = 0; i < n; i++) {
    v8::Local<v8::Value> v = Nan::Get(a, static_cast<uint32_t>(i)).ToLocalChecked();
    if (!v->IsInt32() || Nan::To<int32_t>(v).FromJust() < 0) return Nan::ThrowTypeError("fds must be an array of fds");
    fds[i] = Nan::To<int32_t>(v).FromJust();
  }
  const char *data = "";
  size_t len = 0;
  if (info.Length() > 2 && node::Buffer::HasInstance(info[2])) {
    data = node::Buffer::Data(info[2]);
    len = node::Buffer::Length(info[2]);
  }
  gs_err err = {};
  long r = gs_send_fds(sock, fds, n, data, len, &err);
  if (r < 0) return ThrowErr(err);
  info.GetReturnValue().Set(Nan::New<v8::Number>(static_cast<double>(r)));
}

NAN_METHOD(UnixListen) {
  std::string path;
  if (!StringArg(info, 0, "path", &path)) return;
  int backlog = info.Length() > 1 && info[1]->IsInt32() ? Nan::To<int32_t>(info[1]).FromJust() : 64;
  gs_err err = {};
  int fd = gs_unix_listen(path.c_str(), backlog, &err);
  if (fd < 0) return ThrowErr(err);
  info.GetReturnValue().Set(fd);
}

// unixConnect(path, 'stream' | 'seqpacket' | 'dgram') → fd (blocking, close-on-exec)
NAN_METHOD(UnixConnect) {
  std::string path, type = "stream";
  if (!StringArg(info, 0, "path", &path)) return;
  if (info.Length() > 1 && !StringArg(info, 1, "type", &type)) return;
  int t = type == "seqpacket" ? SOCK_SEQPACKET : type == "dgram" ? SOCK_DGRAM : type == "stream" ? SOCK_STREAM : -1;
  if (t < 0) return Nan::ThrowTypeError("type must be 'stream', 'seqpacket' or 'dgram'");
  gs_err err = {};
  int fd = gs_unix_connect(path.c_str(), t, &err);
  if (fd < 0) return ThrowErr(err);
  info.GetReturnValue().Set(fd);
}

// accept(fd) → fd | null when none is waiting
NAN_METHOD(Accept) {
  int fd;
  if (!FdArg(info, 0, "fd", &fd)) return;
  gs_err err = {};
  int c = gs_accept(fd, &err);
  if (c < 0) {
    if (err.errnum == EAGAIN || err.errnum == EWOULDBLOCK) return info.GetReturnValue().SetNull();
    return ThrowErr(err);
  }
  info.GetReturnValue().Set(c);
}

NAN_METHOD(CloseFd) {
  int fd;
  if (!FdArg(info, 0, "fd", &fd)) return;
  // Linux: the fd is released even when close() reports an error (EINTR
  // included), so never retry; report all but EINTR.
  if (close(fd) && errno != EINTR) {
    int e = errno;
    Nan::ThrowError(Nan::ErrnoException(e, "close", strerror(e), ("fd " + std::to_string(fd)).c_str()));
  }
}

}  // namespace

// verdictForAction(action, {deny, delegate, timeout}) -> 0 | errno: VerdictOf
// for an answered submission, for test/twins.test.ts
NAN_METHOD(VerdictForAction) {
  if (info.Length() < 2 || !info[0]->IsInt32() || !info[1]->IsObject())
    return Nan::ThrowTypeError("verdictForAction(action: int, errnos: {deny, delegate, timeout})");
  v8::Local<v8::Object> eo = info[1].As<v8::Object>();
  SupervisorConfig cfg = {};
  int *dst[] = {&cfg.deny, &cfg.delegate, &cfg.timeout};
  const char *names[] = {"deny", "delegate", "timeout"};
  for (int i = 0; i < 3; i++) {
    v8::Local<v8::Value> v = Nan::Get(eo, Nan::New(names[i]).ToLocalChecked()).ToLocalChecked();
    if (!v->IsInt32()) return Nan::ThrowTypeError((std::string("errnos.") + names[i] + " must be an int").c_str());
    *dst[i] = Nan::To<int32_t>(v).FromJust();
  }
  info.GetReturnValue().Set(VerdictOf(GS_SUB_OK, Nan::To<int32_t>(info[0]).FromJust(), cfg));
}

void InitNotify(v8::Local<v8::Object> target) {
  Notifier::Init(target);
  FdWatcher::Init(target);
  gs_nan::SetMethods(target, {{"socketpair", SocketPair},
                              {"recvFd", RecvFd},
                              {"sendFd", SendFd},
                              {"unixListen", UnixListen},
                              {"unixConnect", UnixConnect},
                              {"accept", Accept},
                              {"closeFd", CloseFd},
                              {"verdictForAction", VerdictForAction}});
}
