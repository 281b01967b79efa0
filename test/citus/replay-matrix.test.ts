// The statements of the tenant-routing files of the "matrix" group (test/support/statement-spool.ts), run on a
// real Citus cluster: see replay.ts.
import { replayGroup } from './replay.ts';

replayGroup('matrix');
