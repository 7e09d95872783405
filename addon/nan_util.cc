// SPDX-License-Identifier: Apache-2.0
// nan helpers shared by the glue files: see nan_util.h.
#include "nan_util.h"
#include <cstring>

namespace gs_nan {

v8::Local<v8::Value> ErrValue(const gs_err &e) {
  return Nan::ErrnoException(e.errnum, e.syscall, strerror(e.errnum), e.what);
}

void ThrowErr(const gs_err &e) {
  Nan::ThrowError(ErrValue(e));
}

bool StringArg(const Nan::FunctionCallbackInfo<v8::Value> &info, int i, const char *name, std::string *out) {
  if (info.Length() <= i || !info[i]->IsString()) {
    Nan::ThrowTypeError((std::string(name) + " must be a string").c_str());
    return false;
  }
  Nan::Utf8String s(info[i]);
  *out = std::string(*s, s.length());
  return true;
}

v8::Local<v8::Value> Get(v8::Local<v8::Object> o, const char *key) {
  v8::Local<v8::Value> v;
  if (!Nan::Get(o, Nan::New(key).ToLocalChecked()).ToLocal(&v)) return Nan::Undefined();
  return v;
}

void Set(v8::Local<v8::Object> o, const char *key, v8::Local<v8::Value> v) {
  Nan::Set(o, Nan::New(key).ToLocalChecked(), v);
}

v8::Local<v8::Value> Num(double v) {
  return Nan::New<v8::Number>(v);
}

v8::Local<v8::Value> Big(uint64_t v) {
  return v8::BigInt::NewFromUnsigned(v8::Isolate::GetCurrent(), v);
}

v8::Local<v8::Object> CopyBuffer(const void *p, size_t n) {
  return Nan::CopyBuffer(static_cast<const char *>(p), n).ToLocalChecked();
}

v8::Local<v8::FunctionTemplate> DefineClass(v8::Local<v8::Object> target, const char *name, Nan::FunctionCallback ctor,
                                            std::initializer_list<Method> methods) {
  v8::Local<v8::FunctionTemplate> tpl = Nan::New<v8::FunctionTemplate>(ctor);
  tpl->SetClassName(Nan::New(name).ToLocalChecked());
  tpl->InstanceTemplate()->SetInternalFieldCount(1);
  for (const Method &m : methods) Nan::SetPrototypeMethod(tpl, m.name, m.fn);
  Nan::Set(target, Nan::New(name).ToLocalChecked(), Nan::GetFunction(tpl).ToLocalChecked());
  return tpl;
}

void SetMethods(v8::Local<v8::Object> target, std::initializer_list<Method> methods) {
  for (const Method &m : methods) Nan::SetMethod(target, m.name, m.fn);
}

int StartPoll(uv_poll_t **p, int fd, int events, void *data, uv_poll_cb cb) {
  *p = new uv_poll_t;
  int r = uv_poll_init(Nan::GetCurrentEventLoop(), *p, fd);
  if (r == 0) {
    (*p)->data = data;
    r = uv_poll_start(*p, events, cb);
  }
  if (r) {
    delete *p;
    *p = nullptr;
  }
  return r;
}

void ClosePoll(uv_poll_t *&p) {
  if (!p) return;
  uv_poll_stop(p);
  // freed in the close callback, never before
  uv_close(reinterpret_cast<uv_handle_t *>(p), [](uv_handle_t *h) { delete reinterpret_cast<uv_poll_t *>(h); });
  p = nullptr;
}

namespace {
void OnWake(uv_async_t *h) {
  Waker *w = static_cast<Waker *>(h->data);
  if (!w->cb) return;
  Nan::HandleScope scope;
  Nan::AsyncResource res(w->resource);
  w->cb->Call(0, nullptr, &res);
}
}  // namespace

Waker *NewWaker(Nan::Callback *cb, const char *resource) {
  Waker *w = new Waker();
  w->h.data = w;
  w->cb = cb;
  w->resource = resource;
  uv_async_init(Nan::GetCurrentEventLoop(), &w->h, OnWake);
  return w;
}

void Wake(void *ctx) {
  uv_async_send(&static_cast<Waker *>(ctx)->h);
}

void CloseWaker(Waker *&w) {
  if (!w) return;
  w->cb = nullptr;
  uv_close(reinterpret_cast<uv_handle_t *>(&w->h), [](uv_handle_t *h) { delete reinterpret_cast<Waker *>(h->data); });
  w = nullptr;
}

}  // namespace gs_nan
