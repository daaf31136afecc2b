// The audit log: every accepted write, newest first, filtered by who, which project and when, a page at a time.
import { useState } from "preact/hooks";
import { proxyApi } from "../api";
import { Field, html, pending, useAnswer, when } from "../ui";

/** An entry's summary as `name: value` pairs, nested values kept as JSON. */
const summaryText = (summary: Record<string, unknown>) =>
  Object.entries(summary)
    .map(([name, value]) => `${name}: ${typeof value === "object" ? JSON.stringify(value) : String(value)}`)
    .join("; ");

export function AuditPage() {
  const [filters, setFilters] = useState({ actor: "", project: "", since: "" });
  const [applied, setApplied] = useState({ actor: "", project: "", since: "", before: "" });
  const query = new URLSearchParams(Object.entries(applied).filter(([, value]) => value !== "")).toString();
  const { answer } = useAnswer(() => proxyApi("GET", `/admin/audit${query ? `?${query}` : ""}`), [query]);
  const set = (name: string) => (value: string) => setFilters({ ...filters, [name]: value });
  const submit = (event: Event) => {
    event.preventDefault();
    setApplied({ ...filters, since: filters.since && new Date(filters.since).toISOString(), before: "" });
  };
  const entries: any[] = answer?.ok ? answer.body.entries : [];
  return html`<h1>Audit log</h1>
    <p>Every change the API accepted, from tenants and operators, newest first.</p>
    <form class="filters" onSubmit=${submit} aria-label="Filters">
      <${Field} id="actor" label="User" value=${filters.actor} onInput=${set("actor")} />
      <${Field} id="project" label="Project" value=${filters.project} onInput=${set("project")} />
      <${Field} id="since" label="Since" type="datetime-local" value=${filters.since} onInput=${set("since")} />
      <button type="submit">Show</button>
    </form>
    ${
      pending(answer) ??
      html`<table>
          <caption>
            ${entries.length} change${entries.length === 1 ? "" : "s"}
          </caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">User</th>
              <th scope="col">Request</th>
              <th scope="col">Answer</th>
              <th scope="col">Project</th>
              <th scope="col">What changed</th>
            </tr>
          </thead>
          <tbody>
            ${entries.map(
              (entry) =>
                html`<tr>
                  <td>${when(entry.at)}</td>
                  <td>${entry.actor} (${entry.role === "admin" ? "operator" : "tenant"})</td>
                  <td><code>${entry.method} ${entry.path}</code></td>
                  <td>${entry.status}</td>
                  <td>${entry.projectLabel ?? "—"}</td>
                  <td>${summaryText(entry.summary)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${answer!.body.nextBefore && html`<button type="button" onClick=${() => setApplied({ ...applied, before: String(answer!.body.nextBefore) })}>Older changes</button>`}`
    }`;
}
