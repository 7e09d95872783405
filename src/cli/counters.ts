// gensee counters --op ID [--json]: the kernel's per-destination counters.
import { parse, requireOp, out, table } from './args';
import { formatTuple } from '../addr';
import { DataPlane } from '../dataplane';

export function run(argv: string[]): number {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const dp = DataPlane.open(op);
  try {
    const rows = dp.readCounters().sort((a, b) => (a.count < b.count ? 1 : a.count > b.count ? -1 : 0));
    const stats = dp.stats();
    if (values.flags.has('json')) {
      out(
        JSON.stringify({
          op,
          counters: rows.map((r) => ({
            family: r.tuple.family,
            protocol: r.tuple.protocol,
            address: r.tuple.address,
            port: r.tuple.port,
            verdict: r.verdict,
            generation: Number(r.generation),
            count: Number(r.count),
          })),
          lost_events: Number(stats.lostEvents),
          counter_map_full: Number(stats.counterFull),
        }),
      );
      return 0;
    }
    out(table([['DESTINATION', 'VERDICT', 'GEN', 'COUNT'], ...rows.map((r) => [formatTuple(r.tuple), r.verdict, String(r.generation), String(r.count)])]));
    out(`lost events: ${stats.lostEvents}  counter map full: ${stats.counterFull}`);
    return 0;
  } finally {
    dp.close();
  }
}
