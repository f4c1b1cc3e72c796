// What the messages ask of path claims (src/domain/messages.ts): whether an agent has claims or
// a place in a room's line, who holds a path now (send_message's `about: path:ROOM:PATH`), and
// the hand-over of a claim to another agent. Beside paths.ts, which owns the index, the timers
// and the line these act on, and hands them over as PathParts.
import { run, get, type Tx } from "../store/tx.ts";
import type { Ctx } from "./context.ts";
import { checkBudget, type CompiledGlob } from "./glob/index.ts";
import type { Journal } from "./journal.ts";
import type { Claim, PathIndex } from "./path-index.ts";
import { type HandedOver, refuseOwnHandOver } from "./primitive.ts";
import { newToken } from "./tokens.ts";

export interface PathParts {
  c: Ctx;
  journal: Journal;
  index: PathIndex;
  defaultRoom: string;
  /** The places this agent holds in the rooms' lines. */
  placesOf(agentId: string): Iterable<unknown>;
  /** Patterns compiled with the room's case rule; throws on a bad one. */
  compile(paths: readonly string[], room: string): CompiledGlob[];
  live(token: string): Tx<Claim | undefined>;
  arm(claim: Claim): void;
  serve(room: string): Tx<void>;
  /** The room's next fence (paths.ts keeps the last ones: fences.ts, RoomFences). */
  fence(room: string): Tx<number>;
}

export class PathMoves {
  constructor(private readonly p: PathParts) {}

  *knows(agentId: string): Tx<boolean> {
    for (const _ of this.p.placesOf(agentId)) return true;
    return (yield* get("SELECT 1 AS x FROM path_claims WHERE agent_id = ? LIMIT 1", agentId)) !== null;
  }

  /** `ROOM:PATH` (or a PATH in the default room): the agents whose live claims overlap PATH. */
  *holders(name: string): Tx<string[]> {
    const i = name.indexOf(":");
    const room = i < 0 ? this.p.defaultRoom : name.slice(0, i);
    const globs = this.p.compile([i < 0 ? name : name.slice(i + 1)], room);
    const found = this.p.index.conflicts(room, globs, undefined, this.p.c.clock.now(), checkBudget());
    return [...new Set(found.map((c) => c.heldBy))];
  }

  /**
   * The claim goes to toAgent with a new token and the room's next fence; its paths and expiry
   * stay. Requests of toAgent's that it held back may go now (an agent never conflicts with
   * itself), so the room's line is served. Null when no live claim has this token.
   */
  *handOver(token: string, toAgent: string): Tx<HandedOver | null> {
    const claim = yield* this.p.live(token);
    if (!claim) return null;
    const about = `path:${claim.room}:${claim.paths.join(" ")}`;
    refuseOwnHandOver(claim.agentId, toAgent, about);
    const moved: Claim = { ...claim, token: newToken(), agentId: toAgent, fence: yield* this.p.fence(claim.room) };
    yield* run("UPDATE path_claims SET token = ?, agent_id = ?, fence = ? WHERE token = ?", moved.token, toAgent, moved.fence, token);
    this.p.c.scheduler.cancel(`path:${token}`);
    this.p.index.remove(claim);
    this.p.index.add(moved, this.p.compile(moved.paths, moved.room));
    this.p.arm(moved);
    yield* this.p.journal.record("path.handed_over", claim.room, {
      agentId: claim.agentId,
      data: { to: toAgent, paths: claim.paths, fence: moved.fence, claim: token.slice(0, 8), new_claim: moved.token.slice(0, 8) },
    });
    yield* this.p.serve(claim.room);
    return { about, from: claim.agentId, token: moved.token, fence: moved.fence };
  }
}
