// Sign-in with the proxy API's user name and password: checked against /test/authping, the operator told apart by
// whether /admin/projects answers. The credentials stay in memory (api.ts) until sign-out or the tab closes.
import { useState } from "preact/hooks";
import { proxyApi, signInToProxy } from "../api";
import { Field, Problem, failureOf, html } from "../ui";

export type Session = { username: string; admin: boolean };

export function SignIn({ onSession }: { onSession: (session: Session) => void }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [problem, setProblem] = useState("");
  const submit = async (event: Event) => {
    event.preventDefault();
    const ping = await signInToProxy(username, password);
    if (!ping.ok) {
      setProblem(ping.status === 401 ? "The user name or the password is wrong." : failureOf(ping));
      return;
    }
    const admin = (await proxyApi("GET", "/admin/projects")).ok;
    setPassword("");
    onSession({ username, admin });
    location.hash = "#/projects";
  };
  return html`<h1>Sign in</h1>
    <p>
      Use your proxy API user name and password. They are kept in this tab's memory only and forgotten when you sign out
      or close the tab.
    </p>
    <form onSubmit=${submit}>
      <${Field} id="username" label="User name" value=${username} onInput=${setUsername} required />
      <${Field} id="password" label="Password" type="password" value=${password} onInput=${setPassword} required />
      ${problem && html`<${Problem}>${problem}<//>`}
      <button type="submit">Sign in</button>
    </form>
    <p>Only the rate limit service? Go to <a href="#/ratelimit">Rate limits</a> with its admin token.</p>`;
}
