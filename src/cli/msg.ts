// `airlock msg TO|--about RESOURCE TEXT...`: send a message from a shell (send_message). TO is an
// agent id, or several joined by commas; with --about every word is the text, and the message
// goes to whoever holds the resource now. `--about path:PATH` with a relative PATH names it in
// this directory's repository, as `claim` does; `path:ROOM:PATH` is sent as given.
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { defaultAgent, here } from "./claims.ts";
import { PORT_ARG } from "./client.ts";
import { tool } from "./wait.ts";

/** A `path:PATH` with no room, as this directory's repository's room and the path relative to its top. */
export function aboutHere(about: string, cwd = process.cwd()): string {
  if (!about.startsWith("path:")) return about;
  const rest = about.slice("path:".length);
  if (rest === "" || rest.includes(":")) return about;
  const where = here(undefined, cwd);
  return `path:${where.room}:${where.paths([rest])[0]}`;
}

export const msgCommand = defineCommand({
  meta: { name: "msg", description: "Send a message to agents (TO, comma-separated) or about a resource (--about lock:NAME, pool:NAME, path:PATH, task:ID)" },
  args: {
    about: { type: "string", description: "Send to whoever holds this resource now instead of to TO" },
    agent: { type: "string", description: "Send as this agent id (default cli:user@host)" },
    subject: { type: "string", description: "A short subject (at most 200 characters)" },
    thread: { type: "string", description: "Continue this thread_id" },
    ack: { type: "boolean", description: "Ask the recipients to acknowledge it" },
    port: PORT_ARG,
  },
  async run({ args }) {
    const words = (Array.isArray(args._) ? args._ : []).map(String);
    const to = args.about === undefined ? words.shift() : undefined;
    const body = words.join(" ");
    if (args.about === undefined && !to) throw new AirlockError("invalid_argument", "give TO (an agent id, or several joined by commas) or --about RESOURCE, then the text");
    if (body.trim() === "") throw new AirlockError("invalid_argument", "give the message's text after TO (or after the flags with --about)");
    const r = await tool<{ message_id: number; to: string[]; thread_id: string }>(
      "send_message",
      {
        from: args.agent ?? defaultAgent(),
        ...(to !== undefined ? { to: to.split(",").filter((t) => t !== "") } : { about: aboutHere(args.about!) }),
        body,
        ...(args.subject ? { subject: args.subject } : {}),
        ...(args.thread ? { thread_id: args.thread } : {}),
        ...(args.ack ? { ack_required: true } : {}),
      },
      { port: args.port },
    );
    console.log(`sent #${r.message_id} to ${r.to.join(", ")} (thread ${r.thread_id})`);
  },
});
