// The proxy's job runs, newest first, and one run's state and output, asked again every two seconds while it is
// queued or running.
import { useEffect } from "preact/hooks";
import { proxyApi } from "../api";
import { Warnings, html, pending, useAnswer, when } from "../ui";

const REFRESH_MS = 2000;
const busy = (run: any) => run && (run.state === "queued" || run.state === "running");

function Run({ id }: { id: string }) {
  const { answer, reload } = useAnswer(() => proxyApi("GET", `/admin/jobs/${encodeURIComponent(id)}`), [id]);
  const run = answer?.ok ? answer.body : undefined;
  useEffect(() => {
    if (!busy(run)) return;
    const timer = setTimeout(reload, REFRESH_MS);
    return () => clearTimeout(timer);
  }, [answer]);
  return html`<section aria-label=${`Run ${id}`} aria-live="polite">
    <h2>Run ${id}</h2>
    ${
      pending(answer) ??
      html`<dl>
          <dt>Job</dt>
          <dd>${run.kind}</dd>
          <dt>State</dt>
          <dd>${run.state}${busy(run) ? " (this page refreshes every two seconds)" : ""}</dd>
          <dt>Started by</dt>
          <dd>${run.trigger}</dd>
          <dt>Started</dt>
          <dd>${when(run.startedAt)}</dd>
          <dt>Ended</dt>
          <dd>${when(run.endedAt)}</dd>
          ${
            run.error &&
            html`<dt>Error</dt>
              <dd>${run.error}</dd>`
          }
        </dl>
        <h3>Output</h3>
        ${run.warnings.length ? html`<${Warnings} warnings=${run.warnings} />` : html`<p>No output.</p>`}`
    }
  </section>`;
}

export function JobsPage({ selected }: { selected?: string }) {
  const { answer, reload } = useAnswer(() => proxyApi("GET", "/admin/jobs?limit=50"), []);
  const runs: any[] = answer?.ok ? answer.body : [];
  useEffect(() => {
    if (!runs.some(busy)) return;
    const timer = setTimeout(reload, REFRESH_MS);
    return () => clearTimeout(timer);
  }, [answer]);
  return html`<h1>Job runs</h1>
    ${
      pending(answer) ??
      html`<table>
        <caption>
          The latest runs, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Job</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
            <th scope="col">Ended</th>
          </tr>
        </thead>
        <tbody>
          ${runs.map(
            (run) =>
              html`<tr>
                <th scope="row"><a href=${`#/jobs/${run.id}`}>Run ${run.id}</a></th>
                <td>${run.kind}</td>
                <td>${run.state}</td>
                <td>${when(run.createdAt)}</td>
                <td>${when(run.endedAt)}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${selected && html`<${Run} id=${selected} />`}`;
}
