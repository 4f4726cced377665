// api.js calls rein's API as the signed-in browser: the cookie rides
// along by itself; every write carries the sign-in's CSRF token.

export const state = { caller: "", csrf: "", via: "", version: "" };

// ApiError is a refused call: status, and the problem's detail.
export class ApiError extends Error {
  constructor(status, detail, body) {
    super(detail || "HTTP " + status);
    this.status = status;
    this.body = body;
  }
}

// call sends a request and returns the decoded JSON answer (null for 204).
export async function call(method, path, body) {
  const headers = {};
  if (method !== "GET" && method !== "HEAD" && state.csrf) headers["X-Rein-CSRF"] = state.csrf;
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { detail: text }; }
  }
  if (!res.ok) throw new ApiError(res.status, data && data.detail, data);
  return data;
}

// notOffered says whether an error is a 404 of a path this server lacks.
export function notOffered(e) {
  return e instanceof ApiError && (e.status === 404 || e.status === 405) && /no route/.test(e.message);
}

// signInWith redeems a login token or a bearer token for the cookie.
export async function signInWith({ token, jwt }) {
  const headers = { "Content-Type": "application/json" };
  if (jwt) headers["Authorization"] = "Bearer " + jwt;
  const res = await fetch("/console/login", { method: "POST", headers, credentials: "same-origin",
    body: JSON.stringify(token ? { token } : {}) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, data.detail, data);
  Object.assign(state, { caller: data.caller, csrf: data.csrf || "", via: data.via, version: data.version });
  return data;
}

// whoami asks who the browser is signed in as; throws ApiError (with
// body.sign_in: link, token or proxy) when it is not.
export async function whoami() {
  const data = await call("GET", "/console/session");
  Object.assign(state, { caller: data.caller, csrf: data.csrf || "", via: data.via, version: data.version });
  return data;
}
