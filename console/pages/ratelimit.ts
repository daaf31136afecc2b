// The rate limit pages, behind the service's admin token: the loaded rules as a tree per domain (algorithm, window,
// shadow and quota flags), the live charts, and a form that sends one descriptor to /json and shows the answer.
import { useState } from "preact/hooks";
import { adoptRateLimitToken, rateLimitApi } from "../api";
import { Field, Problem, failureOf, html, pending, useAnswer } from "../ui";
import { RateLimitCharts } from "./ratelimit-charts";

type Node = { name: string; rule?: string; children: Map<string, Node> };

/** The /rlconfig lines (`<domain>.<key>_<value>.<key>: <rule>`) as a tree under each domain. */
export function ruleTree(text: string, domains: string[]): Node[] {
  const roots = new Map<string, Node>();
  for (const line of text.split("\n")) {
    const cut = line.indexOf(": ");
    if (cut < 0) continue;
    const path = line.slice(0, cut);
    const domain =
      [...domains].sort((a, b) => b.length - a.length).find((name) => path.startsWith(`${name}.`)) ??
      path.split(".")[0];
    let node: Node = roots.get(domain) ?? { name: domain, children: new Map() };
    roots.set(domain, node);
    for (const part of path.slice(domain.length + 1).split(".")) {
      const child = node.children.get(part) ?? { name: part, children: new Map() };
      node.children.set(part, child);
      node = child;
    }
    node.rule = line.slice(cut + 2);
  }
  return [...roots.values()];
}

const Tree = ({ nodes }: { nodes: Node[] }): any =>
  html`<ul>
    ${nodes.map(
      (node) =>
        html`<li>
          <span class="rule-name">${node.name}</span>${node.rule && html`: <span class="rule">${node.rule}</span>`}
          ${node.children.size > 0 && html`<${Tree} nodes=${[...node.children.values()]} />`}
        </li>`,
    )}
  </ul>`;

function Rules() {
  const { answer } = useAnswer(async () => {
    const [dump, files] = await Promise.all([
      rateLimitApi("GET", "/rlconfig", { text: true }),
      rateLimitApi("GET", "/rlconfig/files"),
    ]);
    return { ...dump, body: ruleTree(dump.text, files.ok ? files.body.domains : []) };
  }, []);
  return html`<section aria-label="Rules">
    <h2>Rules in force, per domain</h2>
    <p>
      Each rule: its limit and window (unit), whether it only counts without refusing (shadow mode), whether it is a
      quota, and its algorithm when not the default fixed window.
    </p>
    ${pending(answer) ?? html`<div class="tree"><${Tree} nodes=${answer!.body} /></div>`}
  </section>`;
}

function Decide() {
  const [values, setValues] = useState({ domain: "", key: "", value: "" });
  const [answer, setAnswer] = useState<any>(undefined);
  const set = (name: string) => (value: string) => setValues({ ...values, [name]: value });
  const submit = async (event: Event) => {
    event.preventDefault();
    const entry = { key: values.key, ...(values.value && { value: values.value }) };
    setAnswer(
      await rateLimitApi("POST", "/json", { body: { domain: values.domain, descriptors: [{ entries: [entry] }] } }),
    );
  };
  return html`<form class="change" aria-labelledby="decide-title" onSubmit=${submit}>
    <h2 id="decide-title">Ask for a decision</h2>
    <p>Sends one request description (a descriptor) to the service, as Envoy would, and counts it like any other.</p>
    <${Field} id="rl-domain" label="Domain" value=${values.domain} onInput=${set("domain")} required />
    <${Field} id="rl-key" label="Key" value=${values.key} onInput=${set("key")} required />
    <${Field} id="rl-value" label="Value (optional)" value=${values.value} onInput=${set("value")} />
    <button type="submit">Send</button>
    <section aria-label="Decision">
      <p role="status" class="status">
        ${answer && (answer.status === 0 ? failureOf(answer) : html`Status ${answer.status}: <strong>${answer.body?.overallCode ?? "no decision"}</strong>`)}
      </p>
      ${answer && html`<pre>${JSON.stringify(answer.body, null, 2)}</pre>`}
    </section>
  </form>`;
}

function TokenForm({ onToken }: { onToken: () => void }) {
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState("");
  const submit = async (event: Event) => {
    event.preventDefault();
    const check = await adoptRateLimitToken(token);
    if (check.ok) return onToken();
    setProblem(check.status === 401 || check.status === 403 ? "The token is wrong." : failureOf(check));
  };
  return html`<form onSubmit=${submit}>
    <p>
      The rate limit pages need the service's admin token (RATELIMIT_ADMIN_TOKEN). It is kept in this tab's memory only.
    </p>
    <${Field} id="rl-token" label="Admin token" type="password" value=${token} onInput=${setToken} required />
    ${problem && html`<${Problem}>${problem}<//>`}
    <button type="submit">Use this token</button>
  </form>`;
}

/** The rate limit pages once the token is held (`ready`), else the form that asks for it. */
export function RateLimitPage({ ready, onToken }: { ready: boolean; onToken: () => void }) {
  return html`<h1>Rate limits</h1>
    ${ready ? html`<${Rules} /><${RateLimitCharts} /><${Decide} />` : html`<${TokenForm} onToken=${onToken} />`}`;
}
