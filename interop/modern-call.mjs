// The official TypeScript SDK's client (@modelcontextprotocol/client 2.4.0) in a negotiation
// mode of its own — `legacy` (the initialize handshake), `auto` (`server/discover`, falling back
// to the handshake) or `2026-07-28` (pinned: no handshake, every request carries its envelope) —
// calling tools of an endpoint over streamable HTTP, or of a server it starts over stdio. Prints
// the protocol version it settled on, the tools listed and, per call, the result or what was
// raised, as one JSON object.
//
//   node modern-call.mjs MODE URL TOOL ARGUMENTS_JSON [TOOL ARGUMENTS_JSON]...
//   node modern-call.mjs MODE --stdio 'COMMAND ARG…' TOOL ARGUMENTS_JSON [...]
//   (`{{artifact}}` in ARGUMENTS_JSON: the last artifact id the results before it named; TOOL
//    `@read` with {"uri": …} reads a resource; PROXY_TOKEN: the bearer token over HTTP)
//   node modern-call.mjs --runs N < RUNS_JSON
//   (many runs in one process, N at a time: RUNS_JSON is a list of the arguments each run would
//    take, [MODE, TARGET…, TOOL, ARGUMENTS_JSON, …]; prints one list of their reports, in order,
//    a run that threw reported as {"raised": what})
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

async function run(mode, target, ...rest) {
  let transport;
  let calls = rest;
  if (target === "--stdio") {
    const [command, ...args] = rest[0].split(" ");
    transport = new StdioClientTransport({ command, args, stderr: "ignore" });
    calls = rest.slice(1);
  } else {
    const token = process.env.PROXY_TOKEN;
    const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : {};
    transport = new StreamableHTTPClientTransport(new URL(target), { requestInit });
  }
  const negotiation = mode === "legacy" || mode === "auto" ? mode : { pin: mode };
  const client = new Client(
    { name: "modern-call", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: negotiation } },
  );
  try {
    await client.connect(transport);
    const version = client.getNegotiatedProtocolVersion?.() ?? null;
    const tools = (await client.listTools()).tools;
    const results = [];
    let artifact = "";
    for (let i = 0; i + 1 < calls.length; i += 2) {
      const args = JSON.parse(calls[i + 1].replaceAll("{{artifact}}", artifact));
      let result;
      try {
        result = calls[i] === "@read"
          ? await client.readResource({ uri: args.uri })
          : await client.callTool({ name: calls[i], arguments: args });
      } catch (error) {
        result = { raised: String(error) };
      }
      results.push(result);
      const named = JSON.stringify(result).match(/artifact ([0-9a-f]{32})/g);
      if (named) artifact = named[named.length - 1].slice("artifact ".length);
    }
    return { version, tools, results };
  } finally {
    await client.close().catch(() => {});
  }
}

// Each run's arguments, N at a time, their reports in order.
async function runs(atOnce, each) {
  const reports = new Array(each.length);
  let next = 0;
  const worker = async () => {
    while (next < each.length) {
      const index = next++;
      try {
        reports[index] = await run(...each[index]);
      } catch (error) {
        reports[index] = { raised: String(error) };
      }
    }
  };
  await Promise.all(Array.from({ length: atOnce }, worker));
  return reports;
}

const argv = process.argv.slice(2);
let report;
if (argv[0] === "--runs") {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  report = await runs(Number(argv[1]), JSON.parse(Buffer.concat(chunks).toString()));
} else {
  report = await run(...argv);
}
process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
