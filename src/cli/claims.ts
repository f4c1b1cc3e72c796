// `airlock claims`, `claim`, `unclaim` and `check`: path claims from a shell or a git hook.
// `check --staged` asks whether the files staged for commit step on another agent's claims,
// so a pre-commit hook can stop a commit that edits a region someone else holds.
//
// Rooms (SPEC §6, "A room is a repository"): without --room, the room is the working
// directory's checkout (its top level; the daemon resolves it to the repository's room, and a
// directory outside any repository is a room of its own). Paths on the command line are
// relative to the working directory, as in a shell: from `repo/src`, `api/**` claims
// `src/api/**` and `../docs/x.md` claims `docs/x.md` (a leading `..` may not climb above the top
// level). `check --staged` passes git's paths, which are relative to the top level already.
// With --room NAME, paths are sent as given, relative to that room.
import { hostname, userInfo } from "node:os";
import { relative, sep } from "node:path";
import { defineCommand } from "citty";
import { AirlockError } from "../errors.ts";
import { checkoutTop } from "../machine/repo.ts";
import { PORT_ARG } from "./client.ts";
import { duration } from "./format.ts";
import { type Released, releaseOutcome } from "./release.ts";
import { secondsFlag, tool } from "./wait.ts";
import type { ConflictView } from "../clients/hooks/shared.ts";

const port = PORT_ARG;
const room = { type: "string", description: "Room (default: this directory's repository)" } as const;
const agent = { type: "string", description: "Agent id (default cli:user@host)" } as const;


interface ClaimView {
  agent_id: string;
  room: string;
  paths: string[];
  reason?: string;
  fence: number;
  expires_in_seconds: number;
}

/** The agent a command acts as without --agent: this user on this machine. */
export function defaultAgent(): string {
  try {
    return `cli:${userInfo().username}@${hostname()}`;
  } catch {
    return `cli@${hostname()}`;
  }
}

/** Positional words after the command's own (citty puts them in `_`). */
function positionals(args: { _: unknown }, what: string): string[] {
  const words = (Array.isArray(args._) ? args._ : []).map(String).filter((w) => w !== "");
  if (words.length === 0) throw new AirlockError("invalid_argument", `give at least one ${what}`);
  return words;
}

/** Where a command's claims live, and its paths made relative to that room's top level. */
export interface Here {
  room: string;
  paths(words: readonly string[]): string[];
}

/** The room and paths of a command run in `cwd` (see the header); `--room` takes paths as given. */
export function here(roomFlag: string | undefined, cwd = process.cwd()): Here {
  if (roomFlag) return { room: roomFlag, paths: (w) => [...w] };
  const top = checkoutTop(cwd) ?? cwd;
  const offset = relative(top, cwd).split(sep).filter((s) => s !== "");
  return { room: top, paths: (words) => words.map((w) => fromCwd(w, offset, top)) };
}

/** A cwd-relative path as a top-level-relative one; absolute paths go as they are (the daemon places them). */
function fromCwd(word: string, offset: readonly string[], top: string): string {
  if (word.startsWith("/")) return word;
  const segments = word.split("/");
  const base = [...offset];
  let i = 0;
  for (; i < segments.length && (segments[i] === "." || segments[i] === ".." || segments[i] === ""); i++) {
    if (segments[i] !== "..") continue;
    if (base.length === 0) {
      throw new AirlockError("invalid_argument", `path ${JSON.stringify(word)} climbs above the top level ${top} with ".."; give a path inside it`);
    }
    base.pop();
  }
  const rest = segments.slice(i);
  if (rest.length === 0 || (rest.length === 1 && rest[0] === "")) {
    if (base.length === 0) throw new AirlockError("invalid_argument", `path ${JSON.stringify(word)} is the top level ${top} itself; claim "**" for the whole tree`);
    return base.join("/");
  }
  return [...base, ...rest].join("/");
}

export function renderConflict(c: ConflictView): string {
  return `${c.path}: held by ${c.held_by} as ${c.held_path}${c.room ? ` [room ${c.room}]` : ""} (both match ${c.witness})${c.reason ? ` — ${c.reason}` : ""}`;
}

export const claimsCommand = defineCommand({
  meta: { name: "claims", description: "List live path claims: who holds which paths, why, for how long" },
  args: {
    room: { type: "string", description: "Only this room (default: this directory's repository)" },
    all: { type: "boolean", description: "Every room" },
    json: { type: "boolean", description: "Print JSON" },
    port,
  },
  async run({ args }) {
    const claims = await tool<ClaimView[]>("list_path_claims", args.all ? {} : { room: here(args.room).room }, { port: args.port });
    if (args.json) return console.log(JSON.stringify(claims, null, 2));
    if (claims.length === 0) return console.log(args.all || args.room ? "(no claims)" : "(no claims in this room; --all lists every room)");
    for (const c of claims) {
      console.log(`${c.room}  ${c.agent_id}  ${c.paths.join(" ")}  expires in ${duration(c.expires_in_seconds)}${c.reason ? `  ${c.reason}` : ""}`);
    }
  },
});

export const claimCommand = defineCommand({
  meta: { name: "claim", description: "Claim paths (globs); prints the claim_token, or the conflicts and exits 1" },
  args: {
    room,
    agent,
    ttl: { type: "string", description: "Seconds the claim lives (default 900)" },
    reason: { type: "string", description: "What you are doing there" },
    port,
  },
  async run({ args }) {
    const where = here(args.room);
    const paths = where.paths(positionals(args, "PATH"));
    const ttl = secondsFlag(args.ttl, "--ttl");
    const r = await tool<{ granted: boolean; claim_token?: string; conflicts?: ConflictView[] }>(
      "claim_paths",
      {
        agent_id: args.agent ?? defaultAgent(),
        paths,
        room: where.room,
        ...(ttl ? { ttl_seconds: Math.ceil(ttl) } : {}),
        ...(args.reason ? { reason: args.reason } : {}),
      },
      { port: args.port },
    );
    if (r.granted) return console.log(r.claim_token);
    for (const c of r.conflicts ?? []) console.error(renderConflict(c));
    process.exit(1);
  },
});

export const unclaimCommand = defineCommand({
  meta: { name: "unclaim", description: "Release a path claim by its claim_token" },
  args: { token: { type: "positional", description: "The claim_token", required: true }, port },
  async run({ args }) {
    const r = await tool<Released>("release_paths", { claim_token: args.token }, { port: args.port });
    console.log(releaseOutcome(r, args.token, "claim_token"));
  },
});

/** The repository-relative paths staged for commit in the current directory's repository. */
async function stagedPaths(): Promise<string[]> {
  const proc = Bun.spawn(["git", "diff", "--cached", "--name-only", "-z"], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new AirlockError("invalid_argument", `check --staged: git diff --cached failed: ${err.trim() || `exit ${code}`}`);
  return out.split("\0").filter((p) => p !== "");
}

export const checkCommand = defineCommand({
  meta: { name: "check", description: "Exit 0 if no other agent's claim covers these paths, else 1 naming holder, claim and witness" },
  args: {
    room,
    agent,
    staged: { type: "boolean", description: "Check the files staged for commit (git diff --cached)" },
    port,
  },
  async run({ args }) {
    const where = here(args.room);
    // git's staged paths are relative to the top level already: only the room is needed.
    const paths = args.staged ? await stagedPaths() : where.paths(positionals(args, "PATH (or --staged)"));
    if (paths.length === 0) return console.log("clear (nothing staged)");
    const r = await tool<{ clear: boolean; conflicts: ConflictView[] }>(
      "check_paths",
      { paths, agent_id: args.agent ?? defaultAgent(), room: where.room },
      { port: args.port },
    );
    if (r.clear) return console.log("clear");
    for (const c of r.conflicts) console.error(renderConflict(c));
    process.exit(1);
  },
});
