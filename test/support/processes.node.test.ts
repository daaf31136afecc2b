// freePort's ports: below the kernel's ephemeral range, so that nothing bound to port 0 can take one before its
// server binds it, and never the same one twice in a process.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePort, freePortRange, portSlice } from "./processes.mjs";

const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);

const listen = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });

describe("freePort", () => {
  it("picks from 10000 up to just below the ephemeral range", () => {
    expect(freePortRange()).toEqual({ low: 10_000, high: ephemeralLow - 1 });
  });

  it("hands out distinct ports in this process's part of that range, each one a server can listen on", async () => {
    const { low, high } = portSlice(freePortRange()!, process.env.VITEST_POOL_ID);
    expect(low).toBeGreaterThanOrEqual(10_000);
    expect(high).toBeLessThan(ephemeralLow);
    const ports: number[] = [];
    for (let i = 0; i < 50; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(low);
      expect(port).toBeLessThanOrEqual(high);
      await listen(port);
    }
  });

  it("gives vitest's main process and each of two workers their own third of the range", () => {
    const range = { low: 10_000, high: 32_767 };
    expect(portSlice(range, undefined)).toEqual({ low: 10_000, high: 17_588 });
    expect(portSlice(range, "1")).toEqual({ low: 17_589, high: 25_177 });
    expect(portSlice(range, "2")).toEqual({ low: 25_178, high: 32_766 });
    // A third worker, where a suite runs one, shares the first worker's part.
    expect(portSlice(range, "3")).toEqual(portSlice(range, "1"));
    expect(portSlice(range, "x")).toEqual(portSlice(range, undefined));
  });
});
