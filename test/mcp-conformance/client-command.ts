// The client command the conformance runner spawns for each scenario (`<command> <server-url>`, with
// MCP_CONFORMANCE_SCENARIO and maybe MCP_CONFORMANCE_CONTEXT set). It only relays: the orgplane under
// test runs inside the test process (one app per backend, not one per scenario), whose driver
// (./orgplane-client.ts, behind ORGPLANE_CONFORMANCE_DRIVER) takes orgplane through the scenario.
// Exit status 0 when orgplane completed the flow, 1 otherwise (some scenarios expect a refusal).

const serverUrl = process.argv[2];
const driver = process.env.ORGPLANE_CONFORMANCE_DRIVER;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO;
if (!serverUrl || !driver || !scenario) {
  console.error(
    'usage: client-command.ts <server-url> (with ORGPLANE_CONFORMANCE_DRIVER and MCP_CONFORMANCE_SCENARIO set)',
  );
  process.exit(2);
}
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : null;

const response = await fetch(driver, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ scenario, serverUrl, context }),
});
const outcome = (await response.json()) as { ok: boolean; steps: string[]; error?: string };
for (const step of outcome.steps) console.log(step);
if (!outcome.ok) {
  console.error(`orgplane did not complete the flow: ${outcome.error}`);
  process.exit(1);
}
