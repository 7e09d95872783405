# A stand-in for systemd's fd store, for test/oci/fdkeep.test.ts: runs CMD
# with NOTIFY_SOCKET, keeps every fd sent with FDSTORE=1/FDNAME= (drops it
# on FDSTOREREMOVE=1), and when CMD dies restarts it once with those fds as
# 3, 4, ... and LISTEN_FDS/LISTEN_FDNAMES/LISTEN_PID, as systemd does.
import array, os, select, signal, socket, subprocess, sys

ns, cmd = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(ns)
store = {}
child = None


def log(msg):
    sys.stderr.write("mini-systemd: %s\n" % msg)
    sys.stderr.flush()


def on_term(sig, frame):
    if child and child.poll() is None:
        child.terminate()
    sys.exit(0)


signal.signal(signal.SIGTERM, on_term)


def take(timeout):
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(4 * 16))
    fds = array.array("i")
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % 4)])
    kv = dict(l.split("=", 1) for l in msg.decode().split("\n") if "=" in l)
    name = kv.get("FDNAME", "stored")
    if kv.get("FDSTORE") == "1" and len(fds):
        if name in store:
            os.close(store[name])
        store[name] = fds[0]
        for extra in fds[1:]:
            os.close(extra)
    elif kv.get("FDSTOREREMOVE") == "1":
        if name in store:
            os.close(store.pop(name))
        for f in fds:
            os.close(f)
    else:
        for f in fds:
            os.close(f)


env = dict(os.environ, NOTIFY_SOCKET=ns)
child = subprocess.Popen(cmd, env=env, close_fds=True)
while child.poll() is None:
    take(0.05)
while True:  # what it sent just before dying
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        break
    take(0)
names = list(store.keys())
fds = [store[n] for n in names]
log("restarting with %d fds: %s" % (len(fds), ":".join(names)))


def place():
    high = [os.dup(f) for f in fds]
    for i, f in enumerate(high):
        os.dup2(f, 3 + i)


env2 = dict(env, LISTEN_FDS=str(len(fds)), LISTEN_FDNAMES=":".join(names))
wrapped = ["sh", "-c", 'LISTEN_PID=$$; export LISTEN_PID; exec "$@"', "sh"] + cmd
child = subprocess.Popen(wrapped, env=env2, preexec_fn=place, close_fds=False)
child.wait()
