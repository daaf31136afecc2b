// The environment the HAProxy agent gives `haproxy -c` and the reload command: PATH and nothing else, so that HAProxy's
// `${NAME}` expansion in a pushed configuration cannot read the agent's token or any other variable.
import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../haproxy-agent/apply.mjs";

describe("childEnvironment", () => {
  it("keeps the agent's PATH and drops everything else, the token first", () => {
    const agent = {
      PATH: "/opt/haproxy/sbin:/usr/bin:/bin",
      HAPROXY_AGENT_TOKEN: "agent-token",
      HOME: "/home/agent",
      LANG: "C.UTF-8",
      TZ: "Europe/Zurich",
      AWS_SECRET_ACCESS_KEY: "secret",
    };
    expect(childEnvironment(agent)).toEqual({ PATH: "/opt/haproxy/sbin:/usr/bin:/bin" });
  });

  it("falls back to the system directories when the agent runs without PATH (or with an empty one)", () => {
    const system = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" };
    expect(childEnvironment({ HAPROXY_AGENT_TOKEN: "agent-token" })).toEqual(system);
    expect(childEnvironment({ PATH: "" })).toEqual(system);
  });
});
