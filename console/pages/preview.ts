// What the next generation would ship (HAProxy's and the SSH proxy's previews, with their problems and diff), and
// whether each load balancer runs the version in force (its drift).
import { proxyApi } from "../api";
import { DiffView, parseUnified } from "../diff";
import { Warnings, html, pending, useAnswer, when } from "../ui";

function Preview({ kind, title }: { kind: "haproxy" | "sshproxy"; title: string }) {
  const { answer } = useAnswer(() => proxyApi("GET", `/admin/${kind}/preview`), [kind]);
  const preview = answer?.ok ? answer.body : undefined;
  const problems = preview?.problems ?? [];
  // The generator also writes each problem as a warning ("WARN: " and its message): listed once, as a problem.
  const said = new Set(problems.map((problem: any) => `WARN: ${problem.message}`));
  const warnings = (preview?.warnings ?? []).filter((warning: string) => !said.has(warning));
  return html`<section aria-label=${title}>
    <h2>${title}</h2>
    ${
      pending(answer) ??
      html`<p>
          ${preview.changed ? `It differs from version ${preview.version ?? "(none yet)"} in force.` : "It is the version in force: nothing would change."}
        </p>
        ${preview.valid === false && html`<p class="problem">HAProxy's check refused it: ${preview.validation}</p>`}
        <h3>Problems</h3>
        ${
          problems.length === 0
            ? html`<p>None.</p>`
            : html`<ul aria-label="Problems">
                ${problems.map((problem: any) => html`<li>${typeof problem === "string" ? problem : `${problem.project}/${problem.backend} (${problem.kind}): ${problem.message}`}</li>`)}
              </ul>`
        }
        <${Warnings} warnings=${warnings} />
        <${DiffView} lines=${parseUnified(preview.diff)} caption="Change from the version in force" />`
    }
  </section>`;
}

export function PreviewPage() {
  return html`<h1>Next generation</h1>
    <p>What generating the configuration now would produce. Nothing is stored or shipped by looking.</p>
    <${Preview} kind="haproxy" title="HAProxy" />
    <${Preview} kind="sshproxy" title="SSH proxy" />`;
}

const STATE = {
  "in-sync": "runs the version in force",
  modified: "drift: its files were edited by hand",
  outdated: "drift: it runs another version",
  unreachable: "could not be asked",
  "not-configured": "no agent configured",
};

export function StatusPage() {
  const { answer } = useAnswer(() => proxyApi("GET", "/admin/haproxy/status"), []);
  const balancers: any[] = answer?.ok ? answer.body : [];
  return html`<h1>Load balancers</h1>
    <p>Whether each load balancer runs the HAProxy version in force. Drift means it does not.</p>
    ${
      pending(answer) ??
      html`<table>
        <caption>
          Load balancers
        </caption>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Agent</th>
            <th scope="col">State</th>
            <th scope="col">Runs version</th>
            <th scope="col">In force</th>
            <th scope="col">Last applied</th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          ${balancers.map(
            (balancer) =>
              html`<tr class=${balancer.inSync ? "" : "drift"}>
                <th scope="row">${balancer.role}</th>
                <td>${balancer.agentUrl ?? "—"}</td>
                <td>${STATE[balancer.state as keyof typeof STATE] ?? balancer.state}</td>
                <td>${balancer.version ?? "—"}</td>
                <td>${balancer.expectedVersion ?? "—"}</td>
                <td>${when(balancer.lastAppliedAt)}</td>
                <td>${balancer.lastError ?? "—"}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }`;
}
