// The shared store's clock (the database's, through an offset re-estimated at every heartbeat)
// never goes back, so a deadline set a moment ago never reads as farther away than it was set.
import { expect, test } from "bun:test";
import { offsetClock } from "../../src/domain/clock.ts";

test("a smaller offset estimate holds the clock at its last reading until wall time catches up", () => {
  let wall = 1_000_000;
  let offset = 50;
  const clock = offsetClock(() => offset, () => wall);
  expect(clock.now()).toBe(1_000_050);
  offset = 47; // the next heartbeat's round trip was a little faster
  expect(clock.now()).toBe(1_000_050);
  wall += 2;
  expect(clock.now()).toBe(1_000_050);
  wall += 5;
  expect(clock.now()).toBe(1_000_054);
  offset = 60; // a larger estimate moves it forward at once
  expect(clock.now()).toBe(1_000_067);
});

test("an offer of 30 s set on it reads as at most 30 s after any re-estimate", () => {
  let wall = 5_000_000;
  let offset = 12;
  const clock = offsetClock(() => offset, () => wall);
  const offerEnds = clock.now() + 30_000;
  offset = 9;
  wall += 1;
  expect(Math.ceil((offerEnds - clock.now()) / 1000)).toBeLessThanOrEqual(30);
});
