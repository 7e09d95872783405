// gensee's kernel objects are not the workload's: pinned maps and links,
// the cgroup tree above its own, BPF ids, the host's namespaces, and the
// mounts that hide them (peeled from a nested user namespace).
import t from 'tap';
import { attackTest } from './lib';

attackTest(t, 'bpffs', 'no pinned lease map or link can be opened, written or detached', {
  check: (t, _env, _r, rep) => {
    t.equal(rep?.info.bpf_mounts, 0, 'no bpf filesystem is mounted in the workload\'s view');
    t.equal(rep?.info.pin_dirs_visible, 0, 'no path leads to the operation\'s pins');
  },
});

attackTest(t, 'cgroup', 'no clone3(CLONE_INTO_CGROUP) or cgroup.procs write leaves the operation\'s cgroup');

attackTest(t, 'nested-userns', 'a nested user+mount namespace peels no mount and reaches nothing');

attackTest(t, 'bpf-syscall', 'bpf(2) ids, program loads and system-wide perf are refused');

attackTest(t, 'setns', 'no setns into a host namespace, no open_by_handle_at');
