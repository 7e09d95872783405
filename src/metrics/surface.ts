// The operator's HTTP surface of one operation, beside its live stream:
// /metrics behind the operation token on the stream's servers, the cockpit
// page (src/cockpit/page.ts), and, when asked, /metrics without a token on
// an address of its own. The supervisor starts it and closes it with the
// stream.
import type * as http from 'node:http';
import type { StreamListen } from '../events/stream';
import { cockpitRoute } from '../cockpit/page';
import type { FdatasyncSource } from './fdatasync';
import { evidenceScraper, metricsRoute, startMetricsServer, type MetricsServer } from './http';

export interface OperatorSurface {
  /** for startEventStream({ routes }) */
  routes: (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => boolean;
  /** --metrics ADDR: /metrics without a token */
  listenMetrics(l: StreamListen): Promise<MetricsServer>;
}

export function operatorSurface(o: { stateDir: string; op: string; dir: string; fdatasync?: FdatasyncSource }): OperatorSurface {
  const scrape = evidenceScraper(o.stateDir, o.op, o.dir, o.fdatasync);
  const handlers = [metricsRoute(scrape), cockpitRoute(o)];
  return {
    routes: (req, res, authorized) => handlers.some((h) => h(req, res, authorized)),
    listenMetrics: (l) => startMetricsServer(l, scrape),
  };
}
