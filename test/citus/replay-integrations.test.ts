// The statements of the tenant-routing files of the "integrations" group (test/support/statement-spool.ts), run on a
// real Citus cluster: see replay.ts.
import { replayGroup } from './replay.ts';

replayGroup('integrations');
