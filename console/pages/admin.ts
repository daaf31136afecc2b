// Operator pages: the hosts (with a form to register one), the API users (tenants, and the projects their patterns
// give them) and the console/SSH users with their permissions.
import { useState } from "preact/hooks";
import { proxyApi } from "../api";
import { ChangeOutcome, useChange } from "../change";
import { Field, html, pending, useAnswer } from "../ui";

type Host = { hostname: string; ipv6: string };

function HostForm({ hosts, onApplied }: { hosts: Host[]; onApplied: () => void }) {
  const [values, setValues] = useState({ hostname: "", ipv6: "" });
  const flow = useChange(onApplied);
  const set = (name: string) => (value: string) => (setValues({ ...values, [name]: value }), flow.reset());
  const stored = hosts.find((host) => host.hostname === values.hostname);
  const submit = (event: Event) => {
    event.preventDefault();
    flow.check({ method: "POST", path: "/admin/hosts", body: values });
  };
  return html`<form class="change" aria-labelledby="host-form-title" onSubmit=${submit}>
    <h2 id="host-form-title">Register a host, or change its address</h2>
    <${Field}
      id="hostname"
      label="Host name"
      value=${values.hostname}
      onInput=${set("hostname")}
      error=${flow.fieldError("hostname")}
      required
    />
    <${Field}
      id="ipv6"
      label="IPv6 address"
      value=${values.ipv6}
      onInput=${set("ipv6")}
      error=${flow.fieldError("ipv6")}
      required
    />
    <button type="submit">Check this change (dry run)</button>
    <${ChangeOutcome}
      flow=${flow}
      before=${stored && { hostname: stored.hostname, ipv6: stored.ipv6 }}
      what=${`host ${values.hostname}`}
      fields=${["hostname", "ipv6"]}
      onReload=${onApplied}
    />
  </form>`;
}

export function HostsPage() {
  const { answer, reload } = useAnswer(() => proxyApi("GET", "/admin/hosts"), []);
  const hosts: any[] = answer?.ok ? answer.body : [];
  return html`<h1>Hosts</h1>
    ${
      pending(answer) ??
      html`<table>
        <caption>
          The machines containers run on
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Number</th>
            <th scope="col">IPv6 address</th>
          </tr>
        </thead>
        <tbody>
          ${hosts.map(
            (host) =>
              html`<tr>
                <th scope="row">${host.hostname}</th>
                <td>${host.hostId}</td>
                <td>${host.ipv6}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${HostForm} hosts=${hosts} onApplied=${reload} />`;
}

function ApiUsers() {
  const api = useAnswer(() => proxyApi("GET", "/admin/apiusers"), []).answer;
  return html`<p>Each sees the projects whose label one of its patterns matches in full.</p>
    ${
      pending(api) ??
      html`<table>
        <caption>
          API users
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">E-mail</th>
            <th scope="col">Project patterns</th>
          </tr>
        </thead>
        <tbody>
          ${api!.body.map(
            (user: any) =>
              html`<tr>
                <th scope="row">${user.username}</th>
                <td>${user.email ?? "—"}</td>
                <td>${user.projectPatterns.join(", ")}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }`;
}

function People() {
  const people = useAnswer(() => proxyApi("GET", "/admin/users"), []).answer;
  return html`${
    pending(people) ??
    html`<table>
      <caption>
        Console and SSH users
      </caption>
      <thead>
        <tr>
          <th scope="col">E-mail</th>
          <th scope="col">Name</th>
          <th scope="col">Role</th>
          <th scope="col">Default permissions</th>
          <th scope="col">Proxy permissions</th>
          <th scope="col">SSH key</th>
        </tr>
      </thead>
      <tbody>
        ${people!.body.map(
          (user: any) =>
            html`<tr>
              <th scope="row">${user.email}</th>
              <td>${user.fullname ?? "—"}</td>
              <td>${user.role}</td>
              <td>${user.defaultPermission.join(", ") || "—"}</td>
              <td>${user.proxyPermission.join(", ") || "—"}</td>
              <td>${user.sshPublicKey ? "yes" : "no"}</td>
            </tr>`,
        )}
      </tbody>
    </table>`
  }`;
}

export function UsersPage() {
  return html`<h1>Users</h1>
    <h2>API users</h2>
    <${ApiUsers} />
    <h2>Console and SSH users, and their permissions</h2>
    <${People} />`;
}
