// The projects the signed-in user may see (GET /projects answers only those), each a link to its page.
import { proxyApi } from "../api";
import { html, pending, useAnswer } from "../ui";
import type { Session } from "./sign-in";

export function ProjectList({ session }: { session: Session }) {
  const { answer } = useAnswer(() => proxyApi("GET", "/projects"), []);
  const labels: string[] = answer?.ok ? answer.body : [];
  return html`<h1>Projects</h1>
    <p>${session.admin ? "As an operator you see every project." : "The projects your user may see and change."}</p>
    ${
      pending(answer) ??
      (labels.length === 0
        ? html`<p>No project yet.</p>`
        : html`<ul class="projects">
            ${labels.map((label) => html`<li><a href=${`#/projects/${encodeURIComponent(label)}`}>${label}</a></li>`)}
          </ul>`)
    }`;
}
