// SPDX-License-Identifier: Apache-2.0
// The data plane's nan glue: argument checking, Buffer <-> struct copies,
// errno exceptions. All logic lives in the plain-C files (dataplane.c,
// topup.c, peercred.c).
#include <nan.h>
#include <string>
#include <utility>
#include <vector>
#include <cstring>
#include <cerrno>
#include "dataplane.h"
#include "topup.h"
#include "peercred.h"
#include "features.h"
#include "nan_util.h"
#include "sup_server.h"

void InitNotify(v8::Local<v8::Object> target);            // notify_glue.cc
void InitSupervisorSocket(v8::Local<v8::Object> target);  // sup_glue.cc

namespace {

using gs_nan::CopyBuffer;
using gs_nan::Set;
using gs_nan::StringArg;
using gs_nan::ThrowErr;

bool BufferArg(const Nan::FunctionCallbackInfo<v8::Value> &info, int i, const char *name, size_t size,
               const char **out) {
  if (info.Length() <= i || !node::Buffer::HasInstance(info[i])) {
    Nan::ThrowTypeError((std::string(name) + " must be a Buffer").c_str());
    return false;
  }
  if (node::Buffer::Length(info[i]) != size) {
    Nan::ThrowRangeError((std::string(name) + " must be " + std::to_string(size) + " bytes").c_str());
    return false;
  }
  *out = node::Buffer::Data(info[i]);
  return true;
}

// ---- module functions -------------------------------------------------

// attach's arguments, copied out of V8 so that the attach itself may run on
// a libuv worker thread (attachAsync)
struct AttachArgs {
  std::string pin, cg, guard_dir, guard_cg;
  gs_attach_opts opts = {1, 1, 0, nullptr, nullptr};
};

bool ReadAttachArgs(const Nan::FunctionCallbackInfo<v8::Value> &info, AttachArgs *a) {
  if (!StringArg(info, 0, "pinDir", &a->pin) || !StringArg(info, 1, "cgroupPath", &a->cg)) return false;
  if (info.Length() > 2 && info[2]->IsObject()) {
    v8::Local<v8::Object> o = info[2].As<v8::Object>();
    v8::Local<v8::Value> v;
    if (Nan::Get(o, Nan::New("emitEvents").ToLocalChecked()).ToLocal(&v) && v->IsBoolean())
      a->opts.emit_events = Nan::To<bool>(v).FromJust();
    if (Nan::Get(o, Nan::New("countAllows").ToLocalChecked()).ToLocal(&v) && v->IsBoolean())
      a->opts.count_allows = Nan::To<bool>(v).FromJust();
    if (Nan::Get(o, Nan::New("opLevel").ToLocalChecked()).ToLocal(&v) && v->IsUint32())
      a->opts.op_level = Nan::To<uint32_t>(v).FromJust();
    if (Nan::Get(o, Nan::New("guardDir").ToLocalChecked()).ToLocal(&v) && v->IsString())
      a->guard_dir = *Nan::Utf8String(v);
    if (Nan::Get(o, Nan::New("guardCgroup").ToLocalChecked()).ToLocal(&v) && v->IsString())
      a->guard_cg = *Nan::Utf8String(v);
  }
  if (!a->guard_dir.empty() && a->guard_cg.empty()) {
    Nan::ThrowTypeError("guardDir needs guardCgroup");
    return false;
  }
  return true;
}

int RunAttach(AttachArgs *a, gs_err *err) {
  a->opts.guard_dir = a->guard_dir.empty() ? nullptr : a->guard_dir.c_str();
  a->opts.guard_cgroup = a->guard_cg.empty() ? nullptr : a->guard_cg.c_str();
  return gs_dp_attach(a->pin.c_str(), a->cg.c_str(), &a->opts, err);
}

NAN_METHOD(Attach) {
  AttachArgs a;
  if (!ReadAttachArgs(info, &a)) return;
  gs_err err = {};
  if (RunAttach(&a, &err)) return ThrowErr(err);
}

// The same attach on a libuv worker thread: the load, the verifier and the
// pins take ~100 ms of one core, which the event loop's thread spends on
// other start-up work meanwhile. gs_dp_attach keeps no state outside its
// arguments. cb(err) on the loop's thread.
class AttachWorker : public Nan::AsyncWorker {
 public:
  AttachWorker(Nan::Callback *cb, AttachArgs a) : Nan::AsyncWorker(cb, "gensee:attach"), a_(std::move(a)) {}
  void Execute() override { rc_ = RunAttach(&a_, &err_); }
  void HandleOKCallback() override {
    Nan::HandleScope scope;
    v8::Local<v8::Value> argv[] = {rc_ ? gs_nan::ErrValue(err_) : Nan::Null().As<v8::Value>()};
    callback->Call(1, argv, async_resource);
  }

 private:
  AttachArgs a_;
  gs_err err_ = {};
  int rc_ = 0;
};

NAN_METHOD(AttachAsync) {
  AttachArgs a;
  if (!ReadAttachArgs(info, &a)) return;
  if (info.Length() < 4 || !info[3]->IsFunction()) return Nan::ThrowTypeError("callback must be a function");
  Nan::AsyncQueueWorker(new AttachWorker(new Nan::Callback(info[3].As<v8::Function>()), std::move(a)));
}

NAN_METHOD(Detach) {
  std::string pin;
  if (!StringArg(info, 0, "pinDir", &pin)) return;
  gs_err err = {};
  if (gs_dp_detach(pin.c_str(), &err)) return ThrowErr(err);
}

NAN_METHOD(LinksPresent) {
  std::string pin;
  if (!StringArg(info, 0, "pinDir", &pin)) return;
  info.GetReturnValue().Set(Nan::New<v8::Boolean>(gs_dp_links_present(pin.c_str()) == 1));
}

NAN_METHOD(UnixHooks) {
  info.GetReturnValue().Set(Nan::New<v8::Boolean>(gs_dp_unix_hooks() != 0));
}

// kernelFeatures() -> {name: 0 | errno}: each feature tried (features.h), for `gensee doctor`
NAN_METHOD(KernelFeatures) {
  gs_features f;
  gs_features_probe(&f);
  static const char *const progs[GS_FEATURE_PROGS] = {"prog_connect4",     "prog_connect6",     "prog_sendmsg4",
                                                      "prog_sendmsg6",     "prog_bind4",        "prog_bind6",
                                                      "prog_connect_unix", "prog_sendmsg_unix", "prog_skb_egress",
                                                      "prog_sock_create",  "prog_setsockopt",   "prog_syscall"};
  v8::Local<v8::Object> o = Nan::New<v8::Object>();
  auto put = [&](const char *k, int v) { Nan::Set(o, Nan::New(k).ToLocalChecked(), Nan::New<v8::Number>(v)); };
  put("pidfd_open", f.pidfd_open);
  put("pidfd_getfd", f.pidfd_getfd);
  put("pidfd_get_info", f.pidfd_get_info);
  put("pidfd_thread", f.pidfd_thread);
  put("pidfd_nonleader_errno", f.pidfd_nonleader_errno);
  put("so_peerpidfd", f.so_peerpidfd);
  put("seccomp_listener", f.seccomp_listener);
  put("wait_killable_recv", f.wait_killable_recv);
  put("sync_wake_up", f.sync_wake_up);
  put("addfd", f.addfd);
  put("user_namespaces", f.user_namespaces);
  for (int i = 0; i < GS_FEATURE_PROGS; i++) put(progs[i], f.progs[i]);
  info.GetReturnValue().Set(o);
}

NAN_METHOD(BootNs) {
  info.GetReturnValue().Set(v8::BigInt::NewFromUnsigned(info.GetIsolate(), gs_boot_ns()));
}

NAN_METHOD(PeerCred) {
  if (info.Length() < 1 || !info[0]->IsInt32()) return Nan::ThrowTypeError("fd must be an integer");
  gs_peer p = {};
  gs_err err = {};
  if (gs_peercred(Nan::To<int32_t>(info[0]).FromJust(), &p, &err)) return ThrowErr(err);
  v8::Local<v8::Object> o = Nan::New<v8::Object>();
  Nan::Set(o, Nan::New("pid").ToLocalChecked(), Nan::New<v8::Number>(p.pid));
  Nan::Set(o, Nan::New("uid").ToLocalChecked(), Nan::New<v8::Number>(p.uid));
  Nan::Set(o, Nan::New("gid").ToLocalChecked(), Nan::New<v8::Number>(p.gid));
  info.GetReturnValue().Set(o);
}

// ---- DataPlane: an operation's maps opened from their pins ------------

class DataPlane : public Nan::ObjectWrap {
 public:
  static NAN_MODULE_INIT(Init) {
    gs_nan::DefineClass(target, "DataPlane", New,
                        {{"leasePut", LeasePut},
                         {"leaseGet", LeaseGet},
                         {"leasesFd", LeasesFd},
                         {"leaseDel", LeaseDel},
                         {"ruleSet", RuleSet},
                         {"ruleClear", RuleClear},
                         {"leaseTopUp", LeaseTopUp},
                         {"leaseList", LeaseList},
                         {"leaseListPart", LeaseListPart},
                         {"leaseDelIf", LeaseDelIf},
                         {"countersRead", CountersRead},
                         {"statsRead", StatsRead},
                         {"countersDelete", CountersDelete},
                         {"startEvents", StartEvents},
                         {"stopEvents", StopEvents},
                         {"drainEvents", DrainEvents},
                         {"ackEvents", AckEvents},
                         {"eventsState", EventsState},
                         {"close", Close}});
  }

 private:
  gs_dp dp_;
  bool open_ = false;
  gs_topup topup_ = {};
  gs_events *events_ = nullptr;
  uv_poll_t *poll_ = nullptr;
  Nan::Callback on_events_;
  std::vector<gs_fault_event> pending_;
  std::vector<uint64_t> pending_pos_;  // per event: its ring position, the position after it

  ~DataPlane() override { Shutdown(); }

  void StopPoll() {
    gs_nan::ClosePoll(poll_);
    gs_events_close(events_);
    events_ = nullptr;
    on_events_.Reset();
  }

  void Shutdown() {
    StopPoll();
    gs_topup_close(&topup_);
    if (open_) gs_dp_close(&dp_);
    open_ = false;
  }

  static DataPlane *Self(const Nan::FunctionCallbackInfo<v8::Value> &info) {
    DataPlane *self = Nan::ObjectWrap::Unwrap<DataPlane>(info.Holder());
    return gs_nan::IfOpen(self, self->open_, "DataPlane is closed");
  }

  static NAN_METHOD(New) {
    if (!info.IsConstructCall()) return Nan::ThrowTypeError("use new DataPlane(pinDir)");
    std::string pin;
    if (!StringArg(info, 0, "pinDir", &pin)) return;
    DataPlane *self = new DataPlane();
    gs_err err = {};
    if (gs_dp_open(&self->dp_, pin.c_str(), &err)) {
      delete self;
      return ThrowErr(err);
    }
    self->open_ = true;
    self->Wrap(info.This());
    info.GetReturnValue().Set(info.This());
  }

  static NAN_METHOD(LeasePut) {
    DataPlane *self = Self(info);
    if (!self) return;
    const char *k, *v;
    if (!BufferArg(info, 0, "key", sizeof(gs_lease_key), &k) ||
        !BufferArg(info, 1, "value", sizeof(gs_lease_value), &v))
      return;
    gs_err err = {};
    gs_lease_value back;
    if (gs_lease_put(&self->dp_, reinterpret_cast<const gs_lease_key *>(k), reinterpret_cast<const gs_lease_value *>(v),
                     &back, &err))
      return ThrowErr(err);
    // the entry as read back under the lease lock, right after the put
    info.GetReturnValue().Set(CopyBuffer(&back, sizeof(back)));
  }

  // leasesFd(): the lease map's fd (owned here; a server that puts into it keeps a dup)
  static NAN_METHOD(LeasesFd) {
    DataPlane *self = Self(info);
    if (!self) return;
    info.GetReturnValue().Set(Nan::New<v8::Int32>(gs_dp_leases_fd(&self->dp_)));
  }

  static NAN_METHOD(LeaseGet) {
    DataPlane *self = Self(info);
    if (!self) return;
    const char *k;
    if (!BufferArg(info, 0, "key", sizeof(gs_lease_key), &k)) return;
    gs_lease_value v;
    gs_err err = {};
    int r = gs_lease_get(&self->dp_, reinterpret_cast<const gs_lease_key *>(k), &v, &err);
    if (r < 0) return ThrowErr(err);
    if (r == 0) return info.GetReturnValue().SetNull();
    info.GetReturnValue().Set(CopyBuffer(&v, sizeof(v)));
  }

  // leaseTopUp(args): args is a gs_topup_args, rewritten in place with the
  // program's outputs; returns its gs_topup_status
  static NAN_METHOD(LeaseTopUp) {
    DataPlane *self = Self(info);
    if (!self) return;
    const char *buf;
    if (!BufferArg(info, 0, "args", sizeof(gs_topup_args), &buf)) return;
    gs_topup_args a;
    std::memcpy(&a, buf, sizeof(a));
    gs_err err = {};
    if (gs_topup_load(&self->topup_, self->dp_.leases_fd, &err)) return ThrowErr(err);
    int r = gs_topup_run(&self->topup_, &a, &err);
    if (r < 0) return ThrowErr(err);
    std::memcpy(const_cast<char *>(buf), &a, sizeof(a));
    info.GetReturnValue().Set(Nan::New<v8::Number>(r));
  }

  static NAN_METHOD(LeaseDel) {
    DataPlane *self = Self(info);
    if (!self) return;
    const char *k;
    if (!BufferArg(info, 0, "key", sizeof(gs_lease_key), &k)) return;
    gs_err err = {};
    int r = gs_lease_del(&self->dp_, reinterpret_cast<const gs_lease_key *>(k), &err);
    if (r < 0) return ThrowErr(err);
    info.GetReturnValue().Set(Nan::New<v8::Boolean>(r == 1));
  }

  // ruleSet(kind 0 listen | 1 unix, key Buffer, present) adds or removes one rule
  static NAN_METHOD(RuleSet) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 3 || !info[0]->IsUint32()) return Nan::ThrowTypeError("kind must be 0 (listen) or 1 (unix)");
    uint32_t kind = Nan::To<uint32_t>(info[0]).FromJust();
    if (kind != GS_RULE_LISTEN && kind != GS_RULE_UNIX)
      return Nan::ThrowRangeError("kind must be 0 (listen) or 1 (unix)");
    const char *k;
    if (!BufferArg(info, 1, "key", kind == GS_RULE_LISTEN ? sizeof(gs_listen_key) : sizeof(gs_unix_key), &k)) return;
    gs_err err = {};
    if (gs_rule_set(&self->dp_, static_cast<int>(kind), k, Nan::To<bool>(info[2]).FromJust(), &err))
      return ThrowErr(err);
  }

  static NAN_METHOD(RuleClear) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsUint32()) return Nan::ThrowTypeError("kind must be 0 (listen) or 1 (unix)");
    uint32_t kind = Nan::To<uint32_t>(info[0]).FromJust();
    if (kind != GS_RULE_LISTEN && kind != GS_RULE_UNIX)
      return Nan::ThrowRangeError("kind must be 0 (listen) or 1 (unix)");
    gs_err err = {};
    if (gs_rule_clear(&self->dp_, static_cast<int>(kind), &err)) return ThrowErr(err);
  }

  // {count: n, keys, [name]: values} from list(dp, &keys, &values, &n, &err), as packed Buffers
  template <class K, class V>
  static void Table(const Nan::FunctionCallbackInfo<v8::Value> &info,
                    int (*list)(gs_dp *, K **, V **, size_t *, gs_err *), const char *name) {
    DataPlane *self = Self(info);
    if (!self) return;
    K *keys = nullptr;
    V *vals = nullptr;
    size_t n = 0;
    gs_err err = {};
    if (list(&self->dp_, &keys, &vals, &n, &err)) return ThrowErr(err);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "count", Nan::New<v8::Number>(static_cast<double>(n)));
    Set(o, "keys", CopyBuffer(keys, n * sizeof(*keys)));
    Set(o, name, CopyBuffer(vals, n * sizeof(*vals)));
    free(keys);
    free(vals);
    info.GetReturnValue().Set(o);
  }

  static NAN_METHOD(LeaseList) { Table(info, gs_lease_list, "values"); }

  // leaseListPart(cursor, max) → {count, keys, values, next}: one part of a
  // dump (gs_lease_list_part); cursor -1 starts, next -1 ends
  static NAN_METHOD(LeaseListPart) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 2 || !info[0]->IsNumber() || !info[1]->IsUint32())
      return Nan::ThrowTypeError("leaseListPart(cursor, max): numbers");
    double c = Nan::To<double>(info[0]).FromJust();
    if (c != -1 && (c < 0 || c > 0xffffffffu || c != static_cast<double>(static_cast<int64_t>(c))))
      return Nan::ThrowRangeError("cursor must be -1 or a cursor leaseListPart returned");
    gs_lease_key *keys = nullptr;
    gs_lease_value *vals = nullptr;
    size_t n = 0;
    int64_t next = -1;
    gs_err err = {};
    if (gs_lease_list_part(&self->dp_, static_cast<int64_t>(c), Nan::To<uint32_t>(info[1]).FromJust(), &keys, &vals, &n,
                           &next, &err))
      return ThrowErr(err);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Set(o, "count", Nan::New<v8::Number>(static_cast<double>(n)));
    Set(o, "keys", CopyBuffer(keys, n * sizeof(*keys)));
    Set(o, "values", CopyBuffer(vals, n * sizeof(*vals)));
    Set(o, "next", Nan::New<v8::Number>(static_cast<double>(next)));
    free(keys);
    free(vals);
    info.GetReturnValue().Set(o);
  }

  // leaseDelIf(keys, expected values, nowBootNs) → Buffer of one GS_DEL_IF_*
  // per key: the expiry sweep's compare-and-delete (gs_lease_del_if)
  static NAN_METHOD(LeaseDelIf) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 3 || !node::Buffer::HasInstance(info[0]) || !node::Buffer::HasInstance(info[1]) ||
        !info[2]->IsBigInt())
      return Nan::ThrowTypeError("leaseDelIf(keys: Buffer, values: Buffer, nowBootNs: bigint)");
    size_t klen = node::Buffer::Length(info[0]), vlen = node::Buffer::Length(info[1]);
    size_t n = klen / sizeof(gs_lease_key);
    if (klen % sizeof(gs_lease_key) || vlen != n * sizeof(gs_lease_value))
      return Nan::ThrowRangeError("keys and values must be N lease keys and N lease values");
    bool lossless = false;
    uint64_t now = info[2].As<v8::BigInt>()->Uint64Value(&lossless);
    if (!lossless) return Nan::ThrowRangeError("nowBootNs must be a u64");
    std::vector<uint8_t> out(n);
    gs_lease_del_if(&self->dp_, reinterpret_cast<const gs_lease_key *>(node::Buffer::Data(info[0])),
                    reinterpret_cast<const gs_lease_value *>(node::Buffer::Data(info[1])), n, now, out.data());
    info.GetReturnValue().Set(CopyBuffer(out.data(), n));
  }

  static NAN_METHOD(CountersRead) { Table(info, gs_counters_read, "sums"); }

  // countersDelete(Buffer of N packed gs_counter_key) → number deleted
  static NAN_METHOD(CountersDelete) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 1 || !node::Buffer::HasInstance(info[0])) return Nan::ThrowTypeError("keys must be a Buffer");
    size_t len = node::Buffer::Length(info[0]);
    if (len % sizeof(gs_counter_key)) return Nan::ThrowRangeError("keys must be a multiple of the counter key size");
    size_t deleted = 0;
    gs_err err = {};
    if (gs_counters_delete(&self->dp_, reinterpret_cast<const gs_counter_key *>(node::Buffer::Data(info[0])),
                           len / sizeof(gs_counter_key), &deleted, &err))
      return ThrowErr(err);
    info.GetReturnValue().Set(Nan::New<v8::Number>(static_cast<double>(deleted)));
  }

  static NAN_METHOD(StatsRead) {
    DataPlane *self = Self(info);
    if (!self) return;
    uint64_t st[GS_STAT_MAX];
    gs_err err = {};
    if (gs_stats_read(&self->dp_, st, &err)) return ThrowErr(err);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Nan::Set(o, Nan::New("lostEvents").ToLocalChecked(),
             v8::BigInt::NewFromUnsigned(info.GetIsolate(), st[GS_STAT_LOST_EVENTS]));
    Nan::Set(o, Nan::New("counterFull").ToLocalChecked(),
             v8::BigInt::NewFromUnsigned(info.GetIsolate(), st[GS_STAT_COUNTER_FULL]));
    Nan::Set(o, Nan::New("socketRefused").ToLocalChecked(),
             v8::BigInt::NewFromUnsigned(info.GetIsolate(), st[GS_STAT_SOCKET_REFUSED]));
    Nan::Set(o, Nan::New("unixRefused").ToLocalChecked(),
             v8::BigInt::NewFromUnsigned(info.GetIsolate(), st[GS_STAT_UNIX_REFUSED]));
    info.GetReturnValue().Set(o);
  }

  static void OnEvent(void *arg, uint64_t pos, uint64_t end, const gs_fault_event *ev) {
    DataPlane *self = static_cast<DataPlane *>(arg);
    self->pending_.push_back(*ev);
    self->pending_pos_.push_back(pos);
    self->pending_pos_.push_back(end);
  }

  static void OnReadable(uv_poll_t *h, int status, int) {
    DataPlane *self = static_cast<DataPlane *>(h->data);
    Nan::HandleScope scope;
    gs_err err = {};
    if (status < 0) {
      err.errnum = -status;
      snprintf(err.syscall, sizeof(err.syscall), "uv_poll");
      snprintf(err.what, sizeof(err.what), "ring buffer %s", GS_MAP_EVENTS);
    } else if (gs_events_consume(self->events_, &err) >= 0) {
      err.errnum = 0;
    }
    if (self->on_events_.IsEmpty()) return;
    if (err.errnum) {
      v8::Local<v8::Value> argv[] = {gs_nan::ErrValue(err)};
      Nan::Call(self->on_events_, 1, argv);
      return;
    }
    if (self->pending_.empty()) return;
    size_t n = self->pending_.size();
    v8::Local<v8::Value> argv[] = {Nan::Null(), CopyBuffer(self->pending_.data(), n * sizeof(gs_fault_event)),
                                   CopyBuffer(self->pending_pos_.data(), self->pending_pos_.size() * sizeof(uint64_t))};
    self->pending_.clear();
    self->pending_pos_.clear();
    Nan::AsyncResource res("gensee:events");
    self->on_events_.Call(3, argv, &res);
  }

  // startEvents(cb(err, Buffer of N*48 bytes, Buffer of N*2 u64: each
  // event's ring position and the position after it)); the poll handle is
  // unref'd so an idle event stream never keeps the process alive on its
  // own. Nothing is released to the kernel before ackEvents names it.
  static NAN_METHOD(StartEvents) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (info.Length() < 1 || !info[0]->IsFunction()) return Nan::ThrowTypeError("callback must be a function");
    if (self->events_) return Nan::ThrowError("events already started");
    gs_err err = {};
    self->events_ = gs_events_open(&self->dp_, OnEvent, self, &err);
    if (!self->events_) return ThrowErr(err);
    int r = gs_nan::StartPoll(&self->poll_, gs_events_fd(self->events_), UV_READABLE, self, OnReadable);
    if (r) {
      gs_events_close(self->events_);
      self->events_ = nullptr;
      return Nan::ThrowError(Nan::ErrnoException(-r, "uv_poll_start", uv_strerror(r), GS_MAP_EVENTS));
    }
    bool ref = info.Length() > 1 && Nan::To<bool>(info[1]).FromJust();
    if (!ref) uv_unref(reinterpret_cast<uv_handle_t *>(self->poll_));
    self->on_events_.Reset(info[0].As<v8::Function>());
    self->Ref();  // alive while polling
  }

  // drainEvents(): what the ring holds now, delivered to the startEvents
  // callback before this returns (an ended workload's last events, without
  // waiting for the poll to come round)
  static NAN_METHOD(DrainEvents) {
    DataPlane *self = Self(info);
    if (!self || !self->events_ || !self->poll_) return;
    OnReadable(self->poll_, 0, 0);
  }

  // ackEvents(end): the events read before ring position `end` are durable;
  // the kernel may reuse their room. Events committed meanwhile (they come
  // without a wake-up while older ones are unacked) are delivered before
  // this returns.
  static NAN_METHOD(AckEvents) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (!self->events_) return Nan::ThrowError("events not started");
    if (info.Length() < 1 || !info[0]->IsNumber()) return Nan::ThrowTypeError("ackEvents(end): end must be a number");
    double d = Nan::To<double>(info[0]).FromJust();
    if (!(d >= 0) || d > 9007199254740991.0) return Nan::ThrowRangeError("ackEvents(end): end out of range");
    gs_err err = {};
    if (gs_events_ack(self->events_, static_cast<uint64_t>(d), &err)) return ThrowErr(err);
    if (self->poll_) OnReadable(self->poll_, 0, 0);
  }

  // eventsState(): {mapId, consumed, produced, read} of the ring
  static NAN_METHOD(EventsState) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (!self->events_) return Nan::ThrowError("events not started");
    gs_events_pos p = {};
    gs_events_state(self->events_, &p);
    v8::Local<v8::Object> o = Nan::New<v8::Object>();
    Nan::Set(o, Nan::New("mapId").ToLocalChecked(), Nan::New<v8::Number>(p.map_id));
    Nan::Set(o, Nan::New("consumed").ToLocalChecked(), Nan::New<v8::Number>(static_cast<double>(p.consumed)));
    Nan::Set(o, Nan::New("produced").ToLocalChecked(), Nan::New<v8::Number>(static_cast<double>(p.produced)));
    Nan::Set(o, Nan::New("read").ToLocalChecked(), Nan::New<v8::Number>(static_cast<double>(p.read)));
    info.GetReturnValue().Set(o);
  }

  static NAN_METHOD(StopEvents) {
    DataPlane *self = Self(info);
    if (!self) return;
    if (self->poll_) self->Unref();
    self->StopPoll();
  }

  static NAN_METHOD(Close) {
    DataPlane *self = Nan::ObjectWrap::Unwrap<DataPlane>(info.Holder());
    if (self->poll_) self->Unref();
    self->Shutdown();
  }
};

NAN_MODULE_INIT(InitAll) {
  gs_nan::SetMethods(
      target, {{"attach", Attach}, {"attachAsync", AttachAsync}, {"detach", Detach}, {"linksPresent", LinksPresent}});
  v8::Local<v8::Array> links = Nan::New<v8::Array>(GS_LINKS);
  for (int i = 0; i < GS_LINKS; i++) Nan::Set(links, i, Nan::New(gs_dp_link_name(i)).ToLocalChecked());
  Nan::Set(target, Nan::New("linkNames").ToLocalChecked(), links);
  gs_nan::SetMethods(
      target,
      {{"bootNs", BootNs}, {"peerCred", PeerCred}, {"unixHooks", UnixHooks}, {"kernelFeatures", KernelFeatures}});
  v8::Local<v8::Object> abi = Nan::New<v8::Object>();
  Nan::Set(abi, Nan::New("version").ToLocalChecked(), Nan::New<v8::Number>(GS_ABI_VERSION));
  Nan::Set(abi, Nan::New("leaseKeySize").ToLocalChecked(), Nan::New<v8::Number>(sizeof(gs_lease_key)));
  Nan::Set(abi, Nan::New("leaseValueSize").ToLocalChecked(), Nan::New<v8::Number>(sizeof(gs_lease_value)));
  Nan::Set(abi, Nan::New("counterKeySize").ToLocalChecked(), Nan::New<v8::Number>(sizeof(gs_counter_key)));
  Nan::Set(abi, Nan::New("faultEventSize").ToLocalChecked(), Nan::New<v8::Number>(sizeof(gs_fault_event)));
  Nan::Set(abi, Nan::New("leaseValueUsesLeftOffset").ToLocalChecked(),
           Nan::New<v8::Number>(offsetof(gs_lease_value, uses_left)));
  Nan::Set(abi, Nan::New("counterKeyAddrOffset").ToLocalChecked(),
           Nan::New<v8::Number>(offsetof(gs_counter_key, addr)));
  Nan::Set(abi, Nan::New("faultEventAddrOffset").ToLocalChecked(),
           Nan::New<v8::Number>(offsetof(gs_fault_event, addr)));
  Nan::Set(abi, Nan::New("faultRlKeySize").ToLocalChecked(), Nan::New<v8::Number>(sizeof(gs_fault_rl_key)));
  Nan::Set(abi, Nan::New("faultRlWindowNs").ToLocalChecked(),
           Nan::New<v8::Number>(static_cast<double>(GS_FAULT_RL_WINDOW_NS)));
  Nan::Set(abi, Nan::New("eventsBytes").ToLocalChecked(), Nan::New<v8::Number>(GS_EVENTS_BYTES));
  // the wire rules of every gensee socket (sup_server.h), mirrored in src/protocol/framing.ts
  Nan::Set(abi, Nan::New("frameMaxBytes").ToLocalChecked(), Nan::New<v8::Number>(GS_FRAME_MAX));
  Nan::Set(abi, Nan::New("frameTimeoutMs").ToLocalChecked(), Nan::New<v8::Number>(GS_FRAME_TIMEOUT_MS));
  Nan::Set(target, Nan::New("abi").ToLocalChecked(), abi);
  DataPlane::Init(target);
  InitNotify(target);
  InitSupervisorSocket(target);
}

}  // namespace

NODE_MODULE(gensee, InitAll)
