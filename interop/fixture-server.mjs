// An MCP server written with the official TypeScript SDK that offers what the official
// conformance suite asks of a server — its tools, resources, prompts, completions, logging,
// sampling and elicitation — and a few tools of toolsmith's own tests (large results, a
// structure with an output schema, annotated blocks).
//
//   node fixture-server.mjs            serves on stdio
//   node fixture-server.mjs --http P   serves streamable HTTP on 127.0.0.1:P (0: any), printing
//                                      its URL; with FIXTURE_TOKEN set, requests must carry
//                                      `Authorization: Bearer $FIXTURE_TOKEN`
//
//   node fixture-server.mjs --modern   serves MCP 2026-07-28 only on stdio, as a server of that
//                                      version does: `server/discover`, no handshake (refused
//                                      with -32022), every request carrying its envelope; the
//                                      input-required tools answer InputRequiredResults of their
//                                      own (the keys the conformance suite names, a requestState
//                                      signed with a key of the process's), the rest served by
//                                      the same tools as above, in-process
//
// With FIXTURE_TASKS set, it serves tasks too (the SDK's in-memory task store): `make_task`
// answers a call made as a task with the task, and its result a moment later.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import readline from "node:readline";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListRootsResultSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  McpError,
  ResultSchema,
  SubscribeRequestSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// A 1x1 PNG and a silent WAV, base64.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (t) => ({ content: [{ type: "text", text: t }] });
const empty = { type: "object", properties: {} };

const TOOLS = [
  { name: "test_simple_text", description: "Returns a simple text.", inputSchema: empty },
  { name: "test_image_content", description: "Returns an image.", inputSchema: empty },
  { name: "test_audio_content", description: "Returns an audio clip.", inputSchema: empty },
  { name: "test_embedded_resource", description: "Returns an embedded resource.", inputSchema: empty },
  { name: "test_multiple_content_types", description: "Returns text, an image and a resource.", inputSchema: empty },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs.", inputSchema: empty },
  { name: "test_tool_with_progress", description: "Reports progress 0, 50 and 100 of 100.", inputSchema: empty },
  { name: "test_error_handling", description: "Always fails.", inputSchema: empty },
  // The conformance suite's diagnostic tools for MCP 2026-07-28.
  { name: "test_logging_tool", description: "Logs three messages at info.", inputSchema: empty },
  { name: "test_streaming_elicitation", description: "Asks the client's user, mid-call.", inputSchema: empty },
  { name: "test_missing_capability", description: "Asks the client's model (needs sampling).", inputSchema: empty },
  // The conformance suite's tools of input-required results (2026-07-28), asked the way of the
  // handshake era — a request to the client while the call waits — which the proxy carries
  // across to a 2026-07-28 client as an InputRequiredResult.
  { name: "test_input_required_result_elicitation", description: "Asks the user's name, then greets them.", inputSchema: empty },
  { name: "test_input_required_result_sampling", description: "Asks the client's model a question.", inputSchema: empty },
  { name: "test_input_required_result_list_roots", description: "Asks the client's roots.", inputSchema: empty },
  { name: "test_input_required_result_request_state", description: "Asks the user to confirm.", inputSchema: empty },
  { name: "test_input_required_result_multiple_inputs", description: "Asks the user, the model and the roots at once.", inputSchema: empty },
  { name: "test_input_required_result_multi_round", description: "Asks the user twice, one question after the other.", inputSchema: empty },
  { name: "test_input_required_result_tampered_state", description: "Asks the user to confirm.", inputSchema: empty },
  { name: "test_input_required_result_capabilities", description: "Asks the client's model (sampling only).", inputSchema: empty },
  { name: "test_trigger_tool_change", description: "Announces that the tool list changed.", inputSchema: empty },
  { name: "test_trigger_prompt_change", description: "Announces that the prompt list changed.", inputSchema: empty },
  {
    name: "test_change",
    description: "Announces that its tool list changed, and that every resource subscribed to was updated.",
    inputSchema: empty,
  },
  { name: "whoami", description: "Returns the server process's id and how long it has run, in seconds.", inputSchema: empty },
  {
    name: "test_sampling",
    description: "Asks the client's model.",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Asks the client's user.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  { name: "test_elicitation_sep1034_defaults", description: "Asks with defaults.", inputSchema: empty },
  { name: "test_elicitation_sep1330_enums", description: "Asks with enums.", inputSchema: empty },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
  // toolsmith's own: what a proxy must cut, and what it must pass untouched.
  {
    name: "big_text",
    title: "Big Text",
    description: "Returns `lines` numbered lines, one failing in the middle.",
    inputSchema: { type: "object", properties: { lines: { type: "integer" } } },
  },
  {
    name: "issues",
    title: "Open Issues",
    description: "Lists `count` issues as structured content, with an output schema.",
    inputSchema: { type: "object", properties: { count: { type: "integer" } } },
    outputSchema: {
      type: "object",
      properties: { issues: { type: "array", items: { type: "object" } } },
      required: ["issues"],
    },
    annotations: { readOnlyHint: true },
    execution: { taskSupport: "forbidden" },
  },
  {
    name: "greet",
    description: "Greets `name`, `times` times: a text, and the same greeting as `{ result }`.",
    inputSchema: { type: "object", properties: { name: { type: "string" }, times: { type: "integer" } } },
    outputSchema: { type: "object", properties: { result: { type: "string" } }, required: ["result"] },
  },
  {
    name: "annotated",
    description: "Returns blocks with annotations and a resource link.",
    inputSchema: empty,
  },
  {
    name: "big_image",
    description: "Returns an image of `bytes` bytes of base64.",
    inputSchema: { type: "object", properties: { bytes: { type: "integer" } } },
  },
];

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", description: "A static text.", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "A static image.", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "A resource to subscribe to.", mimeType: "text/plain" },
  { uri: "test://big-text", name: "big-text", description: "A text of 5,000 lines.", mimeType: "text/plain" },
];

const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments." },
  { name: "test_input_required_result_prompt", description: "A prompt that asks the user for its context." },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two arguments.",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt with an embedded resource.",
    arguments: [{ name: "resourceUri", description: "The resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image." },
];

// What the input-required tools ask.
const asking = {
  name: (message) => ({
    method: "elicitation/create",
    params: { message, requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
  }),
  confirm: () => ({
    method: "elicitation/create",
    params: { message: "Please confirm", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } },
  }),
  color: () => ({
    method: "elicitation/create",
    params: {
      message: "Step 2: What is your favorite color?",
      requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
    },
  }),
  model: (question, maxTokens) => ({
    method: "sampling/createMessage",
    params: { messages: [{ role: "user", content: { type: "text", text: question } }], maxTokens },
  }),
  roots: () => ({ method: "roots/list", params: {} }),
};

/// Asks the client through `extra`: the answer, checked by the schema of its method.
const ask = (extra, request) => {
  const schema = { "elicitation/create": ElicitResultSchema, "sampling/createMessage": CreateMessageResultSchema, "roots/list": ListRootsResultSchema }[request.method];
  return extra.sendRequest(request, schema);
};

function numbered(count) {
  const lines = [];
  for (let i = 1; i <= count; i++) {
    lines.push(i === Math.floor(count / 2) ? `ERROR: step ${i} failed: disk full` : `ok: step ${i} passed`);
  }
  return lines.join("\n") + "\n";
}

const TASKS = process.env.FIXTURE_TASKS ? new InMemoryTaskStore() : null;

function newServer() {
  const server = new Server(
    { name: "toolsmith-interop-fixture", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
        ...(TASKS ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
      },
      instructions: "The fixture's own instructions: call test_simple_text first.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TASKS
      ? [...TOOLS, { name: "make_task", description: "Runs as a task when asked.", inputSchema: empty, execution: { taskSupport: "optional" } }]
      : TOOLS,
  }));
  if (TASKS) {
    server.setRequestHandler(GetTaskRequestSchema, async (request) => {
      const task = await TASKS.getTask(request.params.taskId);
      if (!task) throw new Error(`Task ${request.params.taskId} not found`);
      return task;
    });
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request) => {
      for (let i = 0; i < 100; i++) {
        const task = await TASKS.getTask(request.params.taskId);
        if (!task) throw new Error(`Task ${request.params.taskId} not found`);
        if (task.status !== "working") return await TASKS.getTaskResult(request.params.taskId);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error("the task did not finish");
    });
    server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
      const task = await TASKS.getTask(request.params.taskId);
      if (!task) throw new Error(`Task ${request.params.taskId} not found`);
      await TASKS.updateTaskStatus(request.params.taskId, "cancelled");
      return await TASKS.getTask(request.params.taskId);
    });
    server.setRequestHandler(ListTasksRequestSchema, async (request) => TASKS.listTasks(request.params?.cursor));
  }

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const token = request.params._meta?.progressToken;
    if (request.params.name === "make_task" && TASKS) {
      const asked = request.params.task;
      if (!asked) return text("made without a task");
      const task = await TASKS.createTask({ ttl: asked.ttl ?? 60000, pollInterval: 20 }, extra.requestId, request);
      setTimeout(() => {
        TASKS.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: "the task's result" }] }).catch(() => {});
      }, 50);
      return { task };
    }
    switch (request.params.name) {
      case "test_simple_text":
        return text("This is a simple text response for testing.");
      case "test_image_content":
        return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
      case "test_audio_content":
        return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
      case "test_embedded_resource":
        return {
          content: [
            {
              type: "resource",
              resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
            },
          ],
        };
      case "test_multiple_content_types":
        return {
          content: [
            { type: "text", text: "Multiple content types test:" },
            { type: "image", data: PNG, mimeType: "image/png" },
            {
              type: "resource",
              resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' },
            },
          ],
        };
      case "test_input_required_result_elicitation": {
        const answer = await ask(extra, asking.name("What is your name?"));
        return text(`Hello, ${answer.content?.name ?? "whoever you are"}!`);
      }
      case "test_input_required_result_sampling": {
        const answer = await ask(extra, asking.model("What is the capital of France?", 100));
        return text(`The model said: ${answer.content?.text ?? JSON.stringify(answer.content)}`);
      }
      case "test_input_required_result_list_roots": {
        const answer = await ask(extra, asking.roots());
        return text(`Roots: ${(answer.roots ?? []).map((root) => root.uri).join(", ")}`);
      }
      case "test_input_required_result_request_state":
      case "test_input_required_result_tampered_state": {
        const answer = await ask(extra, asking.confirm());
        return text(`state-ok: confirmed=${answer.content?.ok}`);
      }
      case "test_input_required_result_multiple_inputs": {
        const [who, greeting, roots] = await Promise.all([
          ask(extra, asking.name("What is your name?")),
          ask(extra, asking.model("Generate a greeting", 50)),
          ask(extra, asking.roots()),
        ]);
        return text(`${greeting.content?.text ?? "Hello"}, ${who.content?.name}; ${roots.roots?.length ?? 0} roots`);
      }
      case "test_input_required_result_multi_round": {
        const who = await ask(extra, asking.name("Step 1: What is your name?"));
        const color = await ask(extra, asking.color());
        return text(`${who.content?.name} likes ${color.content?.color}`);
      }
      case "test_input_required_result_capabilities": {
        const answer = await ask(extra, asking.model("What is 2 + 2?", 10));
        return text(`The model said: ${answer.content?.text ?? ""}`);
      }
      case "test_trigger_tool_change":
        await server.sendToolListChanged();
        return text("tool list changed");
      case "test_trigger_prompt_change":
        await server.sendPromptListChanged();
        return text("prompt list changed");
      case "test_missing_capability": {
        const answer = await extra.sendRequest(
          { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 } },
          CreateMessageResultSchema,
        );
        return text(`LLM response: ${answer.content?.text ?? ""}`);
      }
      case "test_streaming_elicitation": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: "Your name?",
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            },
          },
          ElicitResultSchema,
        );
        return text(`User response: action=${answer.action}`);
      }
      case "test_logging_tool":
      case "test_tool_with_logging":
        for (const [i, message] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
          if (i > 0) await sleep(50);
          await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: message } });
        }
        return text("Tool with logging executed successfully");
      case "test_tool_with_progress":
        for (const progress of [0, 50, 100]) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress, total: 100, message: `Completed step ${progress / 50 + 1} of 3` },
            });
          }
          await sleep(50);
        }
        return text("Tool with progress executed successfully");
      case "whoami":
        return text(JSON.stringify({ pid: process.pid, uptime: process.uptime() }));
      case "test_change": {
        await server.sendToolListChanged();
        for (const uri of subscriptions) await server.sendResourceUpdated({ uri });
        return text(`changed; updated: ${[...subscriptions].join(", ") || "none"}`);
      }
      case "test_error_handling":
        return { content: [{ type: "text", text: "This tool intentionally returns an error for testing" }], isError: true };
      case "test_sampling": {
        const answer = await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: { messages: [{ role: "user", content: { type: "text", text: String(args.prompt) } }], maxTokens: 100 },
          },
          CreateMessageResultSchema,
        );
        return text(`LLM response: ${answer.content?.text ?? JSON.stringify(answer.content)}`);
      }
      case "test_elicitation": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: String(args.message),
              requestedSchema: {
                type: "object",
                properties: { username: { type: "string", description: "User's response" }, email: { type: "string", description: "User's email address" } },
                required: ["username", "email"],
              },
            },
          },
          ElicitResultSchema,
        );
        return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case "test_elicitation_sep1034_defaults": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: "Test client default value handling - please accept with defaults",
              requestedSchema: {
                type: "object",
                properties: {
                  name: { type: "string", description: "User name", default: "John Doe" },
                  age: { type: "integer", description: "User age", default: 30 },
                  score: { type: "number", description: "User score", default: 95.5 },
                  status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
                  verified: { type: "boolean", description: "Verification status", default: true },
                },
              },
            },
          },
          ElicitResultSchema,
        );
        return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case "test_elicitation_sep1330_enums": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: "Test enum schemas",
              requestedSchema: {
                type: "object",
                properties: {
                  untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
                  titledSingle: {
                    type: "string",
                    oneOf: [
                      { const: "value1", title: "First Option" },
                      { const: "value2", title: "Second Option" },
                      { const: "value3", title: "Third Option" },
                    ],
                  },
                  legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
                  untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
                  titledMulti: {
                    type: "array",
                    items: {
                      anyOf: [
                        { const: "value1", title: "First Choice" },
                        { const: "value2", title: "Second Choice" },
                        { const: "value3", title: "Third Choice" },
                      ],
                    },
                  },
                },
              },
            },
          },
          ElicitResultSchema,
        );
        return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case "json_schema_2020_12_tool":
        return text(`Received: ${JSON.stringify(args)}`);
      case "big_text":
        return text(numbered(Number(args.lines ?? 5000)));
      case "issues": {
        const issues = [];
        for (let i = 1; i <= Number(args.count ?? 3); i++) issues.push({ number: i, title: `issue number ${i}` });
        return { content: [{ type: "text", text: JSON.stringify({ issues }) }], structuredContent: { issues } };
      }
      case "greet": {
        const times = Number(args.times ?? 1);
        let result = `hello, ${args.name}`;
        if (times > 1) result = Array.from({ length: times }, (_, i) => `hello, ${args.name} (${i + 1})\n`).join("");
        return { content: [{ type: "text", text: result }], structuredContent: { result } };
      }
      case "annotated":
        return {
          content: [
            { type: "text", text: "For the model.", annotations: { audience: ["assistant"], priority: 0.9 } },
            { type: "text", text: "For the user only.", annotations: { audience: ["user"] } },
            { type: "resource_link", uri: "test://static-text", name: "static-text", mimeType: "text/plain", description: "A linked resource" },
          ],
          _meta: { "fixture/said": "kept" },
        };
      case "big_image":
        return {
          content: [{ type: "image", data: "A".repeat(Number(args.bytes ?? 2000000)), mimeType: "image/png" }],
          _meta: { "fixture/bytes": Number(args.bytes ?? 2000000) },
        };
      default:
        throw new Error(`Unknown tool: ${request.params.name}`);
    }
  });

  const subscriptions = new Set();
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      { uriTemplate: "test://template/{id}/data", name: "template", description: "Data by id.", mimeType: "application/json" },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (uri === "test://static-text") {
      return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
    }
    if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
    if (uri === "test://watched-resource") return { contents: [{ uri, mimeType: "text/plain", text: "Watched resource content." }] };
    if (uri === "test://big-text") return { contents: [{ uri, mimeType: "text/plain", text: numbered(5000) }] };
    const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (match) {
      const data = { id: match[1], templateTest: true, data: `Data for ID: ${match[1]}` };
      return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(data) }] };
    }
    // SEP-2164: an unknown resource is invalid params, naming the URI.
    throw new McpError(-32602, `Resource not found: ${uri}`, { uri });
  });
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    subscriptions.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const user = (content) => ({ role: "user", content });
    switch (request.params.name) {
      case "test_input_required_result_prompt": {
        const answer = await ask(extra, {
          method: "elicitation/create",
          params: {
            message: "What context should the prompt use?",
            requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] },
          },
        });
        return { messages: [user({ type: "text", text: `Use this context: ${answer.content?.context ?? ""}` })] };
      }
      case "test_simple_prompt":
        return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
      case "test_prompt_with_arguments":
        return { messages: [user({ type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })] };
      case "test_prompt_with_embedded_resource":
        return {
          messages: [
            user({ type: "resource", resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
            user({ type: "text", text: "Please process the embedded resource above." }),
          ],
        };
      case "test_prompt_with_image":
        return {
          messages: [user({ type: "image", data: PNG, mimeType: "image/png" }), user({ type: "text", text: "Please analyze the image above." })],
        };
      default:
        throw new Error(`Unknown prompt: ${request.params.name}`);
    }
  });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const prefix = String(request.params.argument?.value ?? "");
    const values = ["paris", "park", "parma", "rome"].filter((v) => v.startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  return server;
}

async function serveHttp(port) {
  const transports = new Map();
  const token = process.env.FIXTURE_TOKEN;
  const httpServer = http.createServer(async (req, res) => {
    if (token && req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "text/plain" }).end("missing or wrong bearer token");
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      if (req.method !== "POST" || body?.method !== "initialize") {
        res.writeHead(400, { "content-type": "text/plain" }).end("no such session");
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => transports.set(sessionId, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  httpServer.listen(port, "127.0.0.1", () => {
    console.log(`http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
}

// ===== MCP 2026-07-28 only, on stdio =====

const MODERN = "2026-07-28";
const ENVELOPE = "io.modelcontextprotocol/";
const STATE_KEY = randomBytes(32);

/// A requestState the process signed: `payload.signature`, base64url.
function seal(payload) {
  const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
  return `${body}.${createHmac("sha256", STATE_KEY).update(body).digest("base64url")}`;
}

/// The payload of a state this process signed, or undefined (altered, or not ours).
function unseal(state) {
  if (typeof state !== "string") return undefined;
  const [body, signature] = state.split(".");
  if (!body || signature !== createHmac("sha256", STATE_KEY).update(body).digest("base64url")) return undefined;
  try {
    return JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

class Refused extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

const inputRequired = (inputRequests, requestState) => ({
  resultType: "input_required",
  inputRequests,
  ...(requestState ? { requestState } : {}),
});
const complete = (result) => ({ ...result, resultType: "complete" });

/// An accepted elicitation's content, or undefined; a response of the wrong shape is refused.
function accepted(responses, key) {
  const response = responses?.[key];
  if (response === undefined) return undefined;
  if (typeof response !== "object" || response === null) {
    throw new Refused(-32602, `inputResponses.${key} is not a response object`);
  }
  return response.action === "accept" ? response.content ?? {} : undefined;
}

/// The input-required tools and prompt of the conformance suite, answered the 2026-07-28 way:
/// the result, or undefined for a request the in-process server answers.
function answerModern(method, params) {
  const responses = params.inputResponses;
  const state = params.requestState;
  const name = params.name;
  const capabilities = params._meta?.[`${ENVELOPE}clientCapabilities`] ?? {};
  if (method === "prompts/get" && name === "test_input_required_result_prompt") {
    const context = accepted(responses, "user_context");
    if (context === undefined) return inputRequired({ user_context: asking.name("What context should the prompt use?") });
    return complete({ messages: [{ role: "user", content: { type: "text", text: `Use this context: ${context.context ?? ""}` } }] });
  }
  if (method !== "tools/call") return undefined;
  const opened = state === undefined ? undefined : unseal(state);
  if (state !== undefined && opened === undefined) {
    throw new Refused(-32602, "the requestState failed its integrity check");
  }
  const given = (key) => responses?.[key];
  switch (name) {
    case "test_input_required_result_elicitation": {
      const who = accepted(responses, "user_name");
      if (who === undefined) return inputRequired({ user_name: asking.name("What is your name?") });
      return complete(text(`Hello, ${who.name}!`));
    }
    case "test_input_required_result_sampling":
      if (given("capital_question") === undefined) {
        return inputRequired({ capital_question: asking.model("What is the capital of France?", 100) });
      }
      return complete(text(`The model said: ${given("capital_question").content?.text ?? ""}`));
    case "test_input_required_result_list_roots":
      if (given("client_roots") === undefined) return inputRequired({ client_roots: asking.roots() });
      return complete(text(`Roots: ${(given("client_roots").roots ?? []).map((root) => root.uri).join(", ")}`));
    case "test_input_required_result_request_state":
    case "test_input_required_result_tampered_state": {
      const ok = accepted(responses, "confirm");
      if (ok === undefined || opened?.tool !== name) {
        return inputRequired({ confirm: asking.confirm() }, seal({ tool: name, round: 1 }));
      }
      return complete(text(`state-ok: confirmed=${ok.ok}`));
    }
    case "test_input_required_result_multiple_inputs": {
      const keys = ["user_name", "greeting", "client_roots"];
      if (opened?.tool !== name || keys.some((key) => given(key) === undefined)) {
        return inputRequired(
          { user_name: asking.name("What is your name?"), greeting: asking.model("Generate a greeting", 50), client_roots: asking.roots() },
          seal({ tool: name }),
        );
      }
      return complete(text(`${given("greeting").content?.text ?? "Hello"}, ${accepted(responses, "user_name")?.name}`));
    }
    case "test_input_required_result_multi_round": {
      if (opened?.tool === name && opened.round === 2 && accepted(responses, "step2") !== undefined) {
        return complete(text(`${opened.name} likes ${accepted(responses, "step2").color}`));
      }
      if (opened?.tool === name && opened.round === 1 && accepted(responses, "step1") !== undefined) {
        return inputRequired({ step2: asking.color() }, seal({ tool: name, round: 2, name: accepted(responses, "step1").name }));
      }
      return inputRequired({ step1: asking.name("Step 1: What is your name?") }, seal({ tool: name, round: 1 }));
    }
    case "test_input_required_result_capabilities": {
      // Only what the client declared it can be asked.
      const requests = {};
      if (capabilities.sampling) requests.answer = asking.model("What is 2 + 2?", 10);
      if (capabilities.elicitation) requests.who = asking.name("What is your name?");
      if (capabilities.roots) requests.roots = asking.roots();
      if (Object.keys(requests).some((key) => given(key) === undefined) && Object.keys(requests).length > 0) {
        return inputRequired(requests);
      }
      return complete(text("answered"));
    }
    default:
      return undefined;
  }
}

/// A request the in-process server asked its client and no answer was given yet: what the
/// request's InputRequiredResult asks.
class NeedsInput extends Error {}

/// The fixture's own tools answering one 2026-07-28 request, in process: a server and its
/// client of their own (each request is its own), the server's questions to its client
/// answered from the request's `inputResponses` (`request_1`, `request_2`, … in the order they
/// are asked; the tools ask the same questions in the same order each time), or gathered into
/// an InputRequiredResult; a question the request's client did not declare it can be asked
/// refused with -32021. Notifications go out as `out` writes them (logs only when the request
/// asked for them).
async function delegate(method, params, out) {
  const { _meta, inputResponses, requestState, ...rest } = params;
  const declared = _meta?.[`${ENVELOPE}clientCapabilities`] ?? {};
  const logLevel = _meta?.[`${ENVELOPE}logLevel`];
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await newServer().connect(serverSide);
  const inner = new Client(
    { name: "fixture-modern-front", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {}, roots: {} } },
  );
  const asked = [];
  const capabilityOf = { "sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots" };
  const answer = (schema) =>
    inner.setRequestHandler(schema, async (request) => {
      const capability = capabilityOf[request.method];
      if (!declared[capability]) {
        throw Object.assign(new Refused(-32021, `this tool asks \`${request.method}\`, which needs the \`${capability}\` capability`), {
          data: { requiredCapabilities: { [capability]: {} } },
        });
      }
      const key = `request_${asked.length + 1}`;
      asked.push([key, { method: request.method, params: request.params ?? {} }]);
      if (inputResponses?.[key] !== undefined) return inputResponses[key];
      throw new NeedsInput(key);
    });
  answer(CreateMessageRequestSchema);
  answer(ElicitRequestSchema);
  answer(ListRootsRequestSchema);
  if (logLevel !== undefined) {
    inner.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => out(notification));
  }
  await inner.connect(clientSide);
  const token = _meta?.progressToken;
  const onprogress =
    token === undefined ? undefined : (progress) => out({ method: "notifications/progress", params: { progressToken: token, ...progress } });
  let refused;
  try {
    const result = await inner.request({ method, params: rest }, ResultSchema, { onprogress, timeout: 600_000 });
    const unanswered = asked.filter(([key]) => inputResponses?.[key] === undefined);
    if (unanswered.length > 0) return inputRequired(Object.fromEntries(unanswered));
    return complete(result);
  } catch (error) {
    const unanswered = asked.filter(([key]) => inputResponses?.[key] === undefined);
    if (unanswered.length > 0) return inputRequired(Object.fromEntries(unanswered));
    refused = error;
  } finally {
    await inner.close().catch(() => {});
  }
  throw refused;
}

/// Serves MCP 2026-07-28 only on stdio: every request its own, answered as soon as it is done;
/// the fixture's own tools ([`delegate`]) answer what the input-required tools do not.
async function serveModern() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await newServer().connect(serverSide);
  const inner = new Client({ name: "fixture-modern-front", version: "1.0.0" }, { capabilities: {} });
  await inner.connect(clientSide);
  const out = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
  const lines = readline.createInterface({ input: process.stdin });
  lines.on("line", async (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      out({ id: null, error: { code: -32700, message: "not JSON" } });
      return;
    }
    const { id, method } = message;
    if (id === undefined) return; // 2026-07-28 has no notifications a client sends
    const params = message.params ?? {};
    try {
      if (method === "initialize") {
        throw Object.assign(new Refused(-32022, "this server speaks 2026-07-28 only: no initialize handshake"), {
          data: { supported: [MODERN], requested: params.protocolVersion },
        });
      }
      if (params._meta?.[`${ENVELOPE}protocolVersion`] !== MODERN) {
        throw Object.assign(new Refused(-32022, `requests carry ${MODERN} in their envelope`), { data: { supported: [MODERN] } });
      }
      if (method === "server/discover") {
        const capabilities = inner.getServerCapabilities();
        out({
          id,
          result: {
            supportedVersions: [MODERN],
            capabilities,
            instructions: inner.getInstructions(),
            resultType: "complete",
            ttlMs: 0,
            cacheScope: "private",
            _meta: { [`${ENVELOPE}serverInfo`]: inner.getServerVersion() },
          },
        });
        return;
      }
      const answered = answerModern(method, params);
      if (answered !== undefined) {
        out({ id, result: answered });
        return;
      }
      out({ id, result: await delegate(method, params, out) });
    } catch (error) {
      const code = typeof error.code === "number" ? error.code : -32603;
      out({ id, error: { code, message: error.message, ...(error.data ? { data: error.data } : {}) } });
    }
  });
}

const http_at = process.argv.indexOf("--http");
if (process.argv.includes("--modern")) {
  await serveModern();
} else if (http_at >= 0) {
  await serveHttp(Number(process.argv[http_at + 1] ?? 0));
} else {
  await newServer().connect(new StdioServerTransport());
}
