/* SPDX-License-Identifier: Apache-2.0 */
/* nan helpers shared by every glue file (glue.cc, notify_glue.cc, sup_glue.cc):
 * errno exceptions, argument checks, object building, class setup and the
 * uv handles the glue keeps. C++ only; the definitions are in nan_util.cc. */
#ifndef GS_NAN_UTIL_H
#define GS_NAN_UTIL_H
#include <nan.h>
#include <initializer_list>
#include <string>
#include "common.h" /* struct gs_err, clocks */

namespace gs_nan
{
/* err as a JS Error (errno, code, syscall and the object it failed on) */
v8::Local<v8::Value> ErrValue(const gs_err &e);
void ThrowErr(const gs_err &e);

/* info[i] as a string into out; false (with a TypeError thrown) when it is not one */
bool StringArg(const Nan::FunctionCallbackInfo<v8::Value> &info, int i, const char *name, std::string *out);

/* o[key], undefined when it cannot be read */
v8::Local<v8::Value> Get(v8::Local<v8::Object> o, const char *key);
void Set(v8::Local<v8::Object> o, const char *key, v8::Local<v8::Value> v);
v8::Local<v8::Value> Num(double v);
v8::Local<v8::Value> Big(uint64_t v);
/* a new Buffer holding a copy of n bytes at p */
v8::Local<v8::Object> CopyBuffer(const void *p, size_t n);

struct Method {
	const char *name;
	Nan::FunctionCallback fn;
};
/* target[name] = a class made by ctor with these prototype methods; the
 * template is returned for instance checks */
v8::Local<v8::FunctionTemplate> DefineClass(v8::Local<v8::Object> target, const char *name, Nan::FunctionCallback ctor,
					    std::initializer_list<Method> methods);

/* target[name] = fn for each method */
void SetMethods(v8::Local<v8::Object> target, std::initializer_list<Method> methods);

/* self, or null with an Error(closed) thrown when it is no longer open */
template <class T> T *IfOpen(T *self, bool open, const char *closed)
{
	if (open)
		return self;
	Nan::ThrowError(closed);
	return nullptr;
}

/* *p = a new uv_poll_t on fd, started with data and cb: 0, or the libuv
 * error with *p left null */
int StartPoll(uv_poll_t **p, int fd, int events, void *data, uv_poll_cb cb);
/* stop *p and set it null; the handle is freed in its close callback */
void ClosePoll(uv_poll_t *&p);

/* A uv_async_t that lives until its close callback: the C side may still
 * signal it after JS lets go of the wrapper. Each signal calls *cb (while
 * not null) on the loop thread with no arguments. */
struct Waker {
	uv_async_t h;
	Nan::Callback *cb;
	const char *resource;
};
Waker *NewWaker(Nan::Callback *cb, const char *resource);
/* the C side's wake-up: ctx is the Waker */
void Wake(void *ctx);
/* stop calling *cb, close the handle and set w null */
void CloseWaker(Waker *&w);
} // namespace gs_nan

#endif
