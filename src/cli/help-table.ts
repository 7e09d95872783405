// One table for the CLI's help, its "did you mean", its bash completion and
// the README's exit-code table: every command and subcommand, every option
// with its argument and default, an example, and what each exit code means.
// test/cli/help.test.ts holds each command's parser to this table (the
// options a command's parse() accepts are the ones listed here), so the
// help cannot drift from what the parser takes.

export interface OptionHelp {
  /** long name without the dashes */
  name: string;
  /** the value's placeholder; absent for a flag */
  arg?: string;
  short?: string;
  /** may be given more than once */
  multiple?: boolean;
  required?: boolean;
  /** what happens when it is not given */
  default?: string;
  help: string;
}

export interface ExitCode {
  code: string;
  meaning: string;
}

export interface CommandHelp {
  /** "lease add", "run fault" */
  name: string;
  summary: string;
  /** words after "gensee NAME", e.g. "--op ID tcp|udp ADDR:PORT [--ttl DUR]" */
  synopsis: string;
  /** a few sentences of what it does, plain words */
  about?: string;
  options: OptionHelp[];
  examples: string[];
  exit: ExitCode[];
}

/** every command takes these (src/cli/args.ts parse() adds them) */
export const COMMON_OPTIONS: OptionHelp[] = [
  { name: 'state-dir', arg: 'DIR', default: '$GENSEE_STATE_DIR, else /var/lib/gensee', help: 'where operations and their evidence live' },
  { name: 'help', short: 'h', help: 'show this help and exit 0' },
];

const OK_USAGE: ExitCode[] = [
  { code: '0', meaning: 'done' },
  { code: '1', meaning: 'a runtime failure (the kernel, the disk, a peer); the message says which' },
  { code: '2', meaning: 'bad usage or input: nothing was changed' },
];

const op: OptionHelp = { name: 'op', arg: 'ID', required: true, help: 'the operation id: 1-64 of [A-Za-z0-9._-], starting alphanumeric' };
const json: OptionHelp = { name: 'json', help: 'print records as JSON lines instead of text' };
const listen: OptionHelp = {
  name: 'listen',
  arg: '127.0.0.1:PORT',
  default: 'off (the unix socket OP/events.sock is always served)',
  help: 'also serve the live stream, /metrics and the cockpit page on this loopback TCP address, behind the operation token',
};
const metrics: OptionHelp = {
  name: 'metrics',
  arg: '127.0.0.1:PORT',
  default: 'off',
  help: 'serve Prometheus /metrics (only) on this loopback address without a token',
};

export const COMMANDS: CommandHelp[] = [
  {
    name: 'run',
    summary: 'run CMD inside a new operation: hooks, resolver, seccomp pause',
    synopsis: '[--op ID] [--policy FILE] [options] -- CMD ARGS...',
    about:
      'Creates an operation (a cgroup with the eBPF hooks), starts CMD in it from its first instruction and serves its network faults until CMD exits. ' +
      "CMD keeps its own stdout; gensee's lines go to stderr (or --json-out FILE). The evidence stays under the state directory.",
    options: [
      { name: 'op', arg: 'ID', default: 'run-PID-RANDOM', help: 'the operation id' },
      { name: 'policy', arg: 'FILE', default: 'deny everything', help: 'the policy (schema/policy.schema.json)' },
      json,
      { name: 'json-out', arg: 'FILE', default: 'none', help: 'also write every fault and resolution as JSON lines to FILE (a new file, 0600)' },
      { name: 'user', arg: 'USER', default: 'the invoking user (SUDO_UID), else nobody', help: 'run CMD as USER (name or uid)' },
      { name: 'host-root', help: 'run CMD as host root (excludes --user)' },
      { name: 'nft', help: 'mirror the leases into an nftables set (needs nft)' },
      { name: 'keep-hooks', help: 'leave the hooks pinned when CMD ends (failing closed)' },
      { name: 'audit', help: 'audit mode: what the policy would deny gets a short lease and is recorded audit_allowed (docs/audit.md)' },
      { name: 'fail-on-deny', help: 'exit 77 when CMD exited 0 but something was refused' },
      { name: 'report', arg: 'FILE[:FORMAT]', default: 'none', help: 'write the report (text, markdown, json, junit) when the run ends, also when CMD fails' },
      listen,
      metrics,
      { name: 'dns-upstream', arg: '[tcp:]ADDR[:PORT]', default: "the host's resolv.conf", help: "where the operation's DNS stub forwards" },
      { name: 'no-dns', help: 'serve no DNS stub (refused when the policy names hosts)' },
    ],
    examples: ['sudo gensee run --policy policy.json -- curl -sS https://example.com/', 'sudo gensee run --op demo --listen 127.0.0.1:9464 -- ./agent'],
    exit: [
      { code: 'CMD', meaning: "CMD's own exit status (128+N when a signal N ended it)" },
      { code: '125', meaning: 'gensee run itself failed or was given bad usage or input; CMD did not run' },
      { code: '126', meaning: 'CMD was found but could not be started' },
      { code: '127', meaning: 'CMD was not found' },
    ],
  },
  {
    name: 'run fault',
    summary: 'submit a fault (JSON) to a supervisor socket, print the resolution',
    synopsis: '--socket PATH --fault FILE',
    options: [
      { name: 'socket', arg: 'PATH', required: true, help: "the operation's resolver socket (OP/resolver.sock)" },
      { name: 'fault', arg: 'FILE', required: true, help: 'the fault as JSON (schema/fault.schema.json); - is stdin' },
    ],
    examples: ['gensee run fault --socket /var/lib/gensee/network-operations/demo/resolver.sock --fault fault.json'],
    exit: [
      { code: '0', meaning: 'continue or retry' },
      { code: '1', meaning: 'deny' },
      { code: '2', meaning: 'bad usage or input' },
      { code: '3', meaning: 'delegate' },
      { code: '4', meaning: 'could not reach the resolver' },
    ],
  },
  {
    name: 'supervise',
    summary: 'attach to an existing cgroup and serve the resolver on its socket',
    synopsis: '--op ID --cgroup PATH --policy FILE [options]',
    about: 'For a workload someone else started (a container): attaches the hooks to its cgroup and serves until SIGTERM or SIGINT. On exit the hooks stay pinned, failing closed. SIGHUP (or gensee upgrade --op ID): a successor takes over.',
    options: [
      op,
      { name: 'cgroup', arg: 'PATH', required: true, help: 'the cgroup v2 directory (absolute, or relative to the cgroup2 mount)' },
      { name: 'policy', arg: 'FILE', required: true, help: 'the policy' },
      { name: 'owner', arg: 'UID', default: 'root', help: 'the uid that owns the operation (may read its evidence)' },
      { name: 'peer', arg: 'ADDR', multiple: true, default: 'none', help: 'an extra address the resolver socket admits' },
      listen,
      metrics,
      { name: 'dns-listen', arg: 'ADDR[:PORT]', default: 'off', help: 'serve the DNS stub on this address' },
      { name: 'dns-upstream', arg: '[tcp:]ADDR[:PORT]', default: "the host's resolv.conf", help: 'where the DNS stub forwards' },
      { name: 'detach-on-exit', help: 'on exit kill every process in the cgroup, then detach the hooks' },
      { name: 'audit', help: 'audit mode: what the policy would deny gets a short lease and is recorded audit_allowed' },
      { name: 'nft', help: 'mirror the leases into an nftables set' },
      { name: 'takeover-from', arg: 'PID', default: 'none', help: 'set by SIGHUP / `gensee upgrade --op`: tell the running supervise PID to leave, then reopen the operation and serve' },
      json,
    ],
    examples: ['sudo gensee supervise --op web --cgroup /sys/fs/cgroup/web.scope --policy web.json --metrics 127.0.0.1:9464'],
    exit: OK_USAGE,
  },
  {
    name: 'oci-listener',
    summary: 'receive runc/crun seccomp fds (listenerPath), serve each container',
    synopsis: '--socket PATH [--policy-dir DIR] [--policy FILE] [--fdkeep PATH | --no-fdkeep] [--json]',
    about:
      'runc and crun hand the container\'s seccomp notify fd to this socket when the OCI config sets linux.seccomp.listenerPath (podman and ctr pass it on from a profile `gensee profile` prints). ' +
      'Each container becomes an operation. A policy with host rules is refused: no DNS stub serves containers.',
    options: [
      { name: 'socket', arg: 'PATH', required: true, help: 'the unix socket runc/crun connect to (listenerPath)' },
      { name: 'policy-dir', arg: 'DIR', default: 'none', help: 'policies by name: listenerMetadata "policy=NAME" picks DIR/NAME.json, else "op=ID" DIR/ID.json (host rules are refused: no DNS stub serves containers)' },
      { name: 'policy', arg: 'FILE', default: 'deny everything', help: 'the policy for containers that name none' },
      { name: 'fdkeep', arg: 'PATH', default: 'SOCKET.keep/fdkeep.sock (none under systemd: its fd store)', help: "the fd holder's socket (obj/gensee-fdkeep, started if absent): seccomp fds outlive this listener, so a restart or upgrade breaks no container" },
      { name: 'no-fdkeep', help: 'no fd holder: SIGTERM stops, and a restart leaves running containers failing closed (ENOSYS)' },
      { name: 'takeover-from', arg: 'PID', default: 'none', help: 'set by `gensee upgrade`: take the fds over from the running listener PID, then tell it to leave' },
      json,
    ],
    examples: ['sudo gensee oci-listener --socket /run/gensee/oci.sock --policy-dir /etc/gensee/policies', 'sudo gensee oci-listener --socket /run/gensee/oci.sock --fdkeep /run/gensee/fdkeep/fdkeep.sock', 'sudo gensee oci-listener --socket /run/gensee/oci.sock --no-fdkeep'],
    exit: OK_USAGE,
  },
  {
    name: 'profile',
    summary: 'print a seccomp profile that hands containers to oci-listener',
    synopsis: '--socket PATH (--op ID | --policy NAME) [--policy-dir DIR] [--base FILE|none]',
    about:
      'Prints the Docker/OCI seccomp JSON that podman (--security-opt seccomp=FILE), ctr (--seccomp-profile FILE) and a Kubernetes Localhost profile read: ' +
      'the base profile with connect, sendto, sendmsg and sendmmsg sent to the listener (listenerPath), and listenerMetadata naming the operation or the policy. ' +
      'A policy with host rules is refused: the listener serves no DNS stub for containers.',
    options: [
      { name: 'socket', arg: 'PATH', required: true, help: "the oci-listener's --socket, absolute (the profile's listenerPath)" },
      { name: 'op', arg: 'ID', default: 'none', help: 'listenerMetadata "op=ID": the container is operation ID (one container at a time)' },
      { name: 'policy', arg: 'NAME', default: 'none', help: 'listenerMetadata "policy=NAME": each container its own operation, under the listener\'s --policy-dir NAME.json' },
      { name: 'policy-dir', arg: 'DIR', default: 'not checked', help: "the listener's --policy-dir: check now that the policy it will load is there and valid" },
      { name: 'base', arg: 'FILE|none', default: '/usr/share/containers/seccomp.json', help: 'the profile to add the listener to (the runtime default); none: allow every other call' },
    ],
    examples: [
      'gensee profile --socket /run/gensee/oci.sock --op build-42 > gensee.json && podman --runtime runc run --network host --security-opt seccomp=gensee.json IMAGE',
      'gensee profile --socket /run/gensee/oci.sock --policy web --policy-dir /etc/gensee/policies > /var/lib/kubelet/seccomp/gensee-web.json',
    ],
    exit: OK_USAGE,
  },
  {
    name: 'upgrade',
    summary: 'replace a running oci-listener or supervise in place; no workload breaks',
    synopsis: '(--socket PATH | --op ID) [--timeout-ms N] [--json]',
    about: 'Sends SIGHUP to the listener named in PATH.pid: it starts its successor, which takes every fd from the holder (or systemd\'s fd store) and serves; this waits until the old pid is gone and the new one listens. With --op, the same for the `gensee supervise` serving that operation.',
    options: [
      { name: 'socket', arg: 'PATH', default: 'none', help: "the running oci-listener's --socket" },
      { name: 'op', arg: 'ID', default: 'none', help: "a running `gensee supervise`'s operation: its successor reopens it once it has left (hooks, leases and ring stay pinned meanwhile)" },
      { name: 'timeout-ms', arg: 'N', default: '60000', help: 'give up waiting after N ms (the fds stay with the holder)' },
      json,
    ],
    examples: ['sudo gensee upgrade --socket /run/gensee/oci.sock', 'sudo gensee upgrade --op web'],
    exit: OK_USAGE,
  },
  {
    name: 'status',
    summary: 'an operation: its condition, generation, live leases, totals',
    synopsis: '--op ID [--json]',
    options: [op, json],
    examples: ['gensee status --op demo', 'gensee status --op demo --json | jq .leases'],
    exit: [
      { code: '0', meaning: 'the operation is known (whatever its condition)' },
      { code: '1', meaning: 'the operation failed; the message says since when and why' },
      { code: '2', meaning: 'bad usage or an unknown operation' },
    ],
  },
  {
    name: 'ls',
    summary: 'your operations: condition, resolver, hooks, workload identity',
    synopsis: '[--all] [--json]',
    about: "Lists the caller's own operations (owner uid). A state directory the caller may not read is said in a note, not an error.",
    options: [{ name: 'all', default: 'only your own (owner uid = yours)', help: "every owner's operations that you can read" }, json],
    examples: ['gensee ls', 'sudo gensee ls --all --json'],
    exit: OK_USAGE,
  },
  {
    name: 'stop',
    summary: 'end an operation: kill its cgroup, remove hooks and pins, record the stop',
    synopsis: '--op ID [--json]',
    options: [op, json],
    examples: ['sudo gensee stop --op demo'],
    exit: [...OK_USAGE, { code: '3', meaning: 'stopped and removed, but the stop could not be recorded (disk); run stop again' }],
  },
  {
    name: 'rm',
    summary: "free an ended operation's id: keep, archive or delete its evidence",
    synopsis: '--op ID [--archive DIR | --delete-evidence] [--dry-run] [--json]',
    about:
      'Removes a closed or stopped operation from the state directory so its id can be used again. A live operation (served, failing closed, hooks attached, processes in its cgroup) is refused: gensee stop ends it. ' +
      "Only its owner or root removes it. The evidence moves to STATE/archived-operations/ID@CREATED/ with removed.json beside it, unless --archive or --delete-evidence says otherwise. Every removal and refusal is a line in STATE/housekeeping.jsonl.",
    options: [op, ...[
      { name: 'archive', arg: 'DIR', default: 'STATE/archived-operations/', help: 'move the evidence to DIR/ID@CREATED/ (DIR is created 0700; no symlinks on its path)' },
      { name: 'delete-evidence', default: 'off: the evidence is kept', help: 'delete the evidence instead of keeping it' },
      { name: 'dry-run', default: 'off', help: 'check and say what would be removed; change nothing' },
      json,
    ]],
    examples: ['sudo gensee rm --op demo', 'sudo gensee rm --op demo --archive /srv/evidence', 'sudo gensee rm --op demo --delete-evidence'],
    exit: [
      { code: '0', meaning: 'removed (or, with --dry-run, would be)' },
      { code: '1', meaning: 'a runtime failure (the disk); the message says which' },
      { code: '2', meaning: 'refused, nothing changed: bad usage, an unknown id, a live operation (E_OP_LIVE), another owner\'s (E_NOT_OWNER)' },
    ],
  },
  {
    name: 'prune',
    summary: 'remove every operation that ended longer ago than a duration',
    synopsis: '--older-than DURATION [--archive DIR | --delete-evidence] [--dry-run] [--json]',
    about: "As gensee rm, for every closed or stopped operation that ended (its stop, else its last update) more than DURATION ago. Root prunes every owner's; anyone else only their own. Active operations are never touched; an ended one still holding kernel state is skipped with the reason.",
    options: [{ name: 'older-than', arg: 'DURATION', required: true, help: 'e.g. 7d, 12h (250ms, 30s, 5m, 1h, 1d; a bare number is seconds)' }, ...[
      { name: 'archive', arg: 'DIR', default: 'STATE/archived-operations/', help: 'move the evidence to DIR/ID@CREATED/ (DIR is created 0700; no symlinks on its path)' },
      { name: 'delete-evidence', default: 'off: the evidence is kept', help: 'delete the evidence instead of keeping it' },
      { name: 'dry-run', default: 'off', help: 'check and say what would be removed; change nothing' },
      json,
    ]],
    examples: ['sudo gensee prune --older-than 7d --dry-run', 'sudo gensee prune --older-than 30d --archive /srv/evidence'],
    exit: [
      { code: '0', meaning: 'done (what was skipped is listed)' },
      { code: '1', meaning: 'a removal failed (the disk, a damaged record); each is listed' },
      { code: '2', meaning: 'bad usage: nothing changed' },
    ],
  },
  {
    name: 'verify',
    summary: 'check the evidence hash chains and that every fault has its resolution',
    synopsis: '--op ID [--anchor [FILE:]LINE:HASH]... [--json]',
    options: [op, { name: 'anchor', arg: '[FILE:]LINE:HASH', multiple: true, default: 'none', help: 'a line and its hash from an earlier verify, kept elsewhere: proves nothing was cut off the end' }, json],
    examples: ['gensee verify --op demo', 'gensee verify --op demo --anchor faults:120:3f5a...'],
    exit: [
      { code: '0', meaning: 'every chain holds and every fault has its resolution' },
      { code: '1', meaning: 'a problem in the evidence; each is printed' },
      { code: '2', meaning: 'bad usage or an unknown operation' },
    ],
  },
  {
    name: 'counters',
    summary: 'what crossed the boundary: counters.jsonl summary and live kernel counters',
    synopsis: '--op ID [--since TIME|DURATION] [--top N] [--json]',
    options: [
      op,
      { name: 'since', arg: 'TIME|DURATION', default: 'the whole log', help: 'only samples after an ISO time or this long ago (e.g. 10m)' },
      { name: 'top', arg: 'N', default: '10', help: 'how many destinations to list' },
      json,
    ],
    examples: ['gensee counters --op demo --since 10m --top 5'],
    exit: OK_USAGE,
  },
  {
    name: 'events',
    summary: 'boundary events and attention (events.jsonl); --follow the live stream',
    synopsis: '--op ID [--follow] [--json]',
    options: [op, { name: 'follow', short: 'f', help: 'keep printing new events as they happen (until Ctrl-C)' }, json],
    examples: ['gensee events --op demo --follow'],
    exit: OK_USAGE,
  },
  {
    name: 'watch',
    summary: "the watchdog: a workload's events + the boundary -> nudges, attention",
    synopsis: '--op ID --agent-events FILE|- [--stall-after DUR] [--max-nudges N] [--nudge-every DUR] [--from-start]',
    options: [
      op,
      { name: 'agent-events', arg: 'FILE|-', required: true, help: "the workload's own events (JSONL); - is stdin" },
      { name: 'stall-after', arg: 'DUR', default: '300s', help: 'no events at all for this long: a stall nudge, then the stalled flag' },
      { name: 'max-nudges', arg: 'N', default: '3', help: 'hint-loop nudges before nudges_exhausted' },
      { name: 'nudge-every', arg: 'DUR', default: '60s', help: 'the hint-loop nudge period' },
      { name: 'from-start', help: "read the operation's logs from their first line (default: from their end)" },
    ],
    examples: ['gensee watch --op demo --agent-events agent.jsonl'],
    exit: OK_USAGE,
  },
  {
    name: 'doctor',
    summary: 'what this kernel and host give gensee: each feature tried, its fallback, what fails',
    synopsis: '[--json]',
    options: [json],
    examples: ['gensee doctor', 'gensee doctor --json | jq .failing'],
    exit: [
      { code: '0', meaning: 'nothing gensee run needs is missing' },
      { code: '1', meaning: 'a required feature is missing: gensee run refuses here' },
      { code: '2', meaning: 'bad usage: nothing was checked' },
    ],
  },
  {
    name: 'attention clear',
    summary: "a person clears the watchdog's attention (recorded: who, why)",
    synopsis: '--op ID [--by NAME] [--note TEXT] [--json]',
    options: [op, { name: 'by', arg: 'NAME', default: 'the invoking user', help: 'who clears it' }, { name: 'note', arg: 'TEXT', default: 'none', help: 'why' }, json],
    examples: ['gensee attention clear --op demo --by alice --note "looked at it, fine"'],
    exit: OK_USAGE,
  },
  {
    name: 'policy apply',
    summary: 'hand a new policy to the running supervisor (a new generation)',
    synopsis: '--op ID FILE [--json]',
    options: [op, json],
    examples: ['sudo gensee policy apply --op demo policy.json'],
    exit: OK_USAGE,
  },
  {
    name: 'policy suggest',
    summary: "the policy an operation's evidence needs: host rules for names the DNS stub answered, address rules for the rest",
    synopsis: '--op ID [--from ID]... [--merge FILE] [--min-uses N]',
    options: [
      op,
      { name: 'from', arg: 'ID', multiple: true, default: 'none', help: "another operation's evidence too" },
      { name: 'merge', arg: 'FILE', default: 'none', help: 'start from this policy; add only what it does not cover' },
      { name: 'min-uses', arg: 'N', default: '1', help: 'leave out rules used fewer times' },
    ],
    examples: ['gensee policy suggest --op first-run > policy.json'],
    exit: [
      { code: '0', meaning: 'the policy is printed' },
      { code: '1', meaning: 'the evidence fails gensee verify' },
      { code: '2', meaning: 'bad usage, an unknown operation, or no evidence' },
    ],
  },
  {
    name: 'report',
    summary: "an operation's summary for a person or CI: text, markdown, json, junit",
    synopsis: '--op ID [--format text|markdown|json|junit] [--out FILE]',
    options: [op, { name: 'format', arg: 'FORMAT', default: 'text', help: 'text, markdown, json or junit' }, { name: 'out', arg: 'FILE', default: 'stdout', help: 'write it to FILE' }],
    examples: ['gensee report --op demo --format markdown >> "$GITHUB_STEP_SUMMARY"'],
    exit: [
      { code: '0', meaning: 'the report is written' },
      { code: '1', meaning: 'the evidence fails gensee verify (the report says so too)' },
      { code: '2', meaning: 'bad usage or an unknown operation' },
    ],
  },
  {
    name: 'policy check',
    summary: 'list every error in a policy file (JSON pointer and message)',
    synopsis: 'FILE [--json]',
    options: [json],
    examples: ['gensee policy check policy.json'],
    exit: [
      { code: '0', meaning: 'the policy is valid' },
      { code: '2', meaning: 'errors, each printed as POINTER: MESSAGE' },
    ],
  },
  {
    name: 'lease add',
    summary: 'put an exact lease in the kernel map',
    synopsis: '--op ID tcp|udp ADDR:PORT [--ttl DUR] [--uses N] [--generation N] [--json]',
    options: [
      op,
      { name: 'ttl', arg: 'DUR', default: 'never expires', help: 'how long the lease lives (e.g. 30s, 5m)' },
      { name: 'uses', arg: 'N', default: 'unlimited', help: 'how many connects it allows' },
      { name: 'generation', arg: 'N', default: 'the current one', help: 'the policy generation it belongs to' },
      json,
    ],
    examples: ['sudo gensee lease add --op demo tcp 127.0.0.1:8080 --ttl 30s', 'sudo gensee lease add --op demo udp [::1]:53 --uses 1'],
    exit: OK_USAGE,
  },
  { name: 'lease rm', summary: 'remove a lease from the kernel map', synopsis: '--op ID tcp|udp ADDR:PORT', options: [op, json], examples: ['sudo gensee lease rm --op demo tcp 127.0.0.1:8080'], exit: OK_USAGE },
  { name: 'lease ls', summary: 'the leases in the kernel map', synopsis: '--op ID [--json]', options: [op, json], examples: ['sudo gensee lease ls --op demo'], exit: OK_USAGE },
  {
    name: 'hooks attach',
    summary: 'attach the eBPF boundary to a cgroup and pin it',
    synopsis: '--op ID --cgroup PATH [--no-events]',
    options: [op, { name: 'cgroup', arg: 'PATH', required: true, help: 'the cgroup v2 directory' }, { name: 'no-events', help: 'do not emit fault events (deny unleased at once)' }],
    examples: ['sudo gensee hooks attach --op demo --cgroup /sys/fs/cgroup/demo'],
    exit: OK_USAGE,
  },
  { name: 'hooks detach', summary: 'remove the eBPF boundary and its pins', synopsis: '--op ID', options: [op], examples: ['sudo gensee hooks detach --op demo'], exit: OK_USAGE },
  {
    name: 'executor call',
    summary: "run a tool call through the executor (keyed writes), inside the operation's boundary",
    synopsis: '--op ID --tools MODULE TOOL --args JSON [--call-id ID] [--timeout DUR] [--json]',
    options: [
      op,
      { name: 'tools', arg: 'MODULE', required: true, help: 'the module that defines the tools' },
      { name: 'args', arg: 'JSON', required: true, help: "the tool's arguments" },
      { name: 'call-id', arg: 'ID', default: 'a new one', help: 'the call id (repeat a call by its id)' },
      { name: 'timeout', arg: 'DUR', default: "the tool's own", help: 'end the call after this long' },
      json,
    ],
    examples: ['gensee executor call --op demo --tools ./tools.js refund --args \'{"order":"A1"}\''],
    exit: [
      { code: '0', meaning: 'the call completed' },
      { code: '1', meaning: 'the call failed or was refused' },
      { code: '2', meaning: 'bad usage or input' },
    ],
  },
  {
    name: 'executor recover',
    summary: 'recover the calls a crashed executor left started',
    synopsis: '--op ID --tools MODULE [--json]',
    options: [op, { name: 'tools', arg: 'MODULE', required: true, help: 'the module that defines the tools' }, json],
    examples: ['gensee executor recover --op demo --tools ./tools.js'],
    exit: [
      { code: '0', meaning: 'every started call reached a state' },
      { code: '1', meaning: 'a call is still started' },
      { code: '2', meaning: 'bad usage or input' },
    ],
  },
  {
    name: 'completion',
    summary: 'print a bash completion script (from this same table)',
    synopsis: 'bash',
    options: [],
    examples: ['gensee completion bash > /etc/bash_completion.d/gensee', 'source <(gensee completion bash)'],
    exit: OK_USAGE,
  },
  {
    name: 'help',
    summary: 'help for a command',
    synopsis: '[COMMAND [SUBCOMMAND]]',
    options: [],
    examples: ['gensee help run', 'gensee help lease add'],
    exit: OK_USAGE,
  },
];

/** the commands by their full name ("lease add") */
export const BY_NAME: ReadonlyMap<string, CommandHelp> = new Map(COMMANDS.map((c) => [c.name, c]));

/** top-level names ("lease", "run") with their subcommands ("add", "fault"; "" for the command itself) */
export function topLevel(): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const c of COMMANDS) {
    const [top, sub] = c.name.split(' ');
    const l = m.get(top) ?? [];
    l.push(sub ?? '');
    m.set(top, l);
  }
  return m;
}

/** what every command's exit codes mean, for the README's one table */
export const GENERAL_EXIT: ExitCode[] = OK_USAGE;
