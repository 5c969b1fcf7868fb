// Many clients of one streamable HTTP endpoint at once, made by the official TypeScript SDK:
// the gateway load bench's driver (crates/cli/benches/gateway.rs).
//
//   node load-client.mjs URL CLIENTS CALLS      (PROXY_TOKEN: the bearer token, if any)
//
// Opens CLIENTS sessions at once and prints {"opened": [ms…], "failed": n} when all are
// open; waits for a line on stdin (the bench measures memory meanwhile); then each session
// calls `test_simple_text` CALLS times in turn, all sessions together, and prints
// {"calls": n, "seconds": s, "errors": n}; then ends every session.
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clients, calls] = [new URL(process.argv[2]), Number(process.argv[3]), Number(process.argv[4])];
const headers = process.env.PROXY_TOKEN ? { Authorization: `Bearer ${process.env.PROXY_TOKEN}` } : {};

const start = performance.now();
const opening = Array.from({ length: clients }, async () => {
  const client = new Client({ name: "load-client", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  try {
    await client.connect(transport);
    return { client, transport, ms: performance.now() - start };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
});
const sessions = await Promise.all(opening);
const open = sessions.filter((session) => session.client);
const failures = sessions.filter((session) => session.error).map((session) => session.error);
console.log(JSON.stringify({ opened: open.map((session) => session.ms), failed: failures.length, why: failures.slice(0, 3) }));

const lines = readline.createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));

let errors = 0;
const began = performance.now();
await Promise.all(
  open.map(async ({ client }) => {
    for (let i = 0; i < calls; i++) {
      try {
        const result = await client.callTool({ name: "test_simple_text", arguments: {} });
        if (result.isError) errors++;
      } catch {
        errors++;
      }
    }
  }),
);
const seconds = (performance.now() - began) / 1000;
console.log(JSON.stringify({ calls: open.length * calls, seconds, errors }));
await Promise.all(open.map(({ transport }) => transport.terminateSession().catch(() => {})));
await Promise.all(open.map(({ client }) => client.close().catch(() => {})));
lines.close();
