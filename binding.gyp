{
  "targets": [
    {
      "target_name": "gensee",
      "sources": ["addon/glue.cc", "addon/dataplane.c", "addon/peercred.c", "addon/notify.c", "addon/notify_glue.cc"],
      "include_dirs": ["<!(node -e \"require('nan')\")", "obj", "bpf"],
      "cflags": ["-Wall", "-Wextra", "-Werror"],
      "cflags_cc": ["-Wall", "-Wextra", "-Werror", "-Wno-cast-function-type"],
      "cflags_c": ["-std=gnu11"],
      "libraries": ["-lbpf", "-lelf", "-lz"]
    }
  ]
}
