// Two clients of a toolsmith gateway, made by the official TypeScript SDK, each with its own
// token: whose sessions and artifacts are whose, and how the endpoint answers what the SDK
// servers refuse. Prints one JSON report.
//
//   node gateway-client.mjs URL      (TOKEN_A, TOKEN_B: the two clients' bearer tokens;
//                                     CUT_TOOL, CUT_ARGUMENTS: the call whose result is cut,
//                                     by default big_text of 20,000 lines)
import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const [a, b] = [process.env.TOKEN_A, process.env.TOKEN_B];

async function connect(token) {
  const client = new Client({ name: "gateway-client", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const text = (result) => ({ isError: result.isError ?? false, text: result.content[0].text });
const read = async (client, id) =>
  text(await client.callTool({ name: "read_artifact", arguments: { id, offset: 0, limit: 2 } }));

// A raw request with headers of our choosing: the status it gets.
function raw(method, headers, body) {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.on("error", reject);
    request.end(body);
  });
}
const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });
const json = { "content-type": "application/json", accept: "application/json, text/event-stream" };

const first = await connect(a);
const cutTool = process.env.CUT_TOOL ?? "big_text";
const cutArguments = JSON.parse(process.env.CUT_ARGUMENTS ?? '{"lines": 20000}');
const cut = text(await first.client.callTool({ name: cutTool, arguments: cutArguments }));
const id = cut.text.match(/[0-9a-f]{32}/)[0];
const session = first.transport.sessionId;
const report = { id, session, cut: cut.text.slice(-400) };
report.ownRead = await read(first.client, id);
report.unknownRead = await read(first.client, "0123456789abcdef0123456789abcdef");

const second = await connect(b);
report.otherRead = await read(second.client, id);
report.status = {
  ownSession: await raw("POST", { ...json, authorization: `Bearer ${a}`, "mcp-session-id": session }, ping),
  lowercaseScheme: await raw("POST", { ...json, authorization: `bearer ${a}`, "mcp-session-id": session }, ping),
  otherTokensSession: await raw("POST", { ...json, authorization: `Bearer ${b}`, "mcp-session-id": session }, ping),
  upperCasedId: await raw("POST", { ...json, authorization: `Bearer ${a}`, "mcp-session-id": session.toUpperCase() }, ping),
  longerId: await raw("POST", { ...json, authorization: `Bearer ${a}`, "mcp-session-id": `${session}0` }, ping),
  noAccept: await raw("POST", { "content-type": "application/json", authorization: `Bearer ${a}`, "mcp-session-id": session }, ping),
  jsonOnlyAccept: await raw("POST", { ...json, accept: "application/json", authorization: `Bearer ${a}`, "mcp-session-id": session }, ping),
  textBody: await raw("POST", { ...json, "content-type": "text/plain", authorization: `Bearer ${a}`, "mcp-session-id": session }, ping),
  getWithoutEventStream: await raw("GET", { accept: "application/json", authorization: `Bearer ${a}`, "mcp-session-id": session }),
};
if (a !== b) {
  report.status.otherTokensDelete = await raw("DELETE", { authorization: `Bearer ${b}`, "mcp-session-id": session });
}
// The first client ends its session; a new one with the same token reads again.
await first.transport.terminateSession();
report.status.afterDelete = await raw("POST", { ...json, authorization: `Bearer ${a}`, "mcp-session-id": session }, ping);
const third = await connect(a);
report.laterRead = await read(third.client, id);
await Promise.all([second.client.close(), third.client.close()]);
console.log(JSON.stringify(report));
process.exit(0);
