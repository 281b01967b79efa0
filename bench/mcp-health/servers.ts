// The MCP servers of bench/mcp-health, in their own process so that their CPU is not the job's:
// SDK Streamable HTTP servers on loopback that demand an API key. Prints their URLs as one JSON line
// and keeps them up until its stdin closes.
import { startStreamableServer } from '../../test/support/mcp-servers.ts';

const count = Number(process.argv[2] ?? 10);
const servers = await Promise.all(Array.from({ length: count }, () => startStreamableServer({ apiKey: 'bench-key' })));
process.stdout.write(`${JSON.stringify({ urls: servers.map((server) => server.url), pid: process.pid })}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await Promise.all(servers.map((server) => server.close()));
  process.exit(0);
});
