{
  "targets": [
    {
      "target_name": "gensee",
      "sources": ["addon/dataplane_glue.cc", "addon/nan_util.cc", "addon/common.c", "addon/dataplane.c", "addon/topup.c", "addon/peercred.c", "addon/notify.c", "addon/notify_glue.cc", "addon/fdpass.c", "addon/synclog.c", "addon/sup_server.c", "addon/sup_client.c", "addon/subject.c", "addon/proc.c", "addon/sup_glue.cc", "addon/gen/gensee/v2/fault.pb-c.c", "addon/gen/gensee/v2/control.pb-c.c"],
      "include_dirs": ["<!(node -e \"require('nan')\")", "obj", "bpf", "addon/gen"],
      "cflags": ["-Wall", "-Wextra", "-Werror"],
      "cflags_cc": ["-Wall", "-Wextra", "-Werror", "-Wno-cast-function-type"],
      "cflags_c": ["-std=gnu11"],
      "libraries": ["-lbpf", "-lelf", "-lz", "-lprotobuf-c", "-lpthread", "-lcrypto"]
    }
  ]
}
