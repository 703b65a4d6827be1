/**
 * A real identity provider for tests: `oidc-provider` on a free loopback port, issuing real
 * signed JWT access tokens bound to a resource (RFC 8707 resource indicators), or opaque ones
 * for the resources a test says, with introspection (RFC 7662) for a confidential client.
 *
 * Sign-in needs no browser: `authorize(url, login)` walks an authorization URL the way a user
 * agent would, following redirects with its own cookies and posting the provider's own
 * (development) login and consent forms — any login is accepted, which is why this lives in
 * the testkit and listens on 127.0.0.1 only. `accessToken()` runs the whole authorization code
 * flow with PKCE for the public client; `registerClient()` adds a web application's client (a
 * gateway's browser sign-in) once its redirect URI is known. For attacks, `sign()` signs any claims with the
 * provider's own current key, `signWithUnknownKey()` with a key it never published, and the
 * public key is there to key an HMAC with. `rotateKeys()` puts a new signing key first (the
 * old one stays published) and `requests(path)` counts what the provider was asked.
 */
import { createHash, randomBytes, randomUUID, type webcrypto } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type JWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from "jose";
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider";

export interface TestAccount {
  name?: string;
  groups?: string[];
}

export interface IdentityProviderOptions {
  /** Who may sign in, with their claims; any other login signs in with no name and no groups. */
  accounts?: Record<string, TestAccount>;
  /** The scopes every resource offers (granted on consent). Default: `mcp:tools`. */
  scopes?: readonly string[];
  /** Resources that get opaque tokens (introspected); every other resource gets JWTs. */
  opaqueResources?: readonly string[];
  /** Access token lifetime. Default 600 s. */
  accessTokenTtlSec?: number;
}

export interface IdentityProvider {
  /** `http://127.0.0.1:<port>`: what its tokens' `iss` says. */
  readonly issuer: string;
  /** The public client of MCP clients (PKCE, no secret), registered beforehand. */
  readonly publicClient: { clientId: string; redirectUri: string };
  /** A confidential client that may introspect tokens (the gateway's). */
  readonly introspectionClient: { clientId: string; clientSecret: string };
  /** How many requests reached `path` (e.g. `/jwks`) so far. */
  requests(path: string): number;
  /**
   * From now on, answers `path` with `answer` instead of the provider (an outage, a broken or
   * oversized document, or `"hang"`: never a byte); `undefined` gives the path back to it.
   */
  respondInstead(path: string, answer: { status: number; body?: string } | "hang" | undefined): void;
  /**
   * Walks `authorizationUrl` as `login`: signs in and consents through the provider's own
   * forms, and returns what it sends back to the redirect URI (the first URL off the provider's
   * own origin): the code, the state, and that whole URL.
   */
  authorize(
    authorizationUrl: string | URL,
    login: string,
  ): Promise<{ code: string; state: string | undefined; url: URL }>;
  /**
   * Registers a client of a web application (a gateway's browser sign-in) once its redirect
   * URIs are known: confidential with `clientSecret` (client_secret_basic), else public (PKCE).
   */
  registerClient(client: { clientId: string; redirectUris: string[]; clientSecret?: string }): void;
  /** An access token for `resource` through the authorization code flow with PKCE. */
  accessToken(options: { login: string; resource: string; scope?: string }): Promise<string>;
  /** Any claims, signed with the provider's current signing key (its `kid` in the header). */
  sign(claims: JWTPayload, header?: { alg?: string; kid?: string }): Promise<string>;
  /** Claims signed with a key the provider never published, under a `kid` of the caller's choice. */
  signWithUnknownKey(claims: JWTPayload, kid?: string): Promise<string>;
  /** Claims with `alg: none` and no signature. */
  forgeUnsigned(claims: JWTPayload): string;
  /**
   * Claims signed HS256 with the current signing key's public half (its PEM) as the secret, under
   * its `kid`: the forgery a verifier falls for when it lets the token pick the algorithm.
   */
  forgeHmacWithPublicKey(claims: JWTPayload): Promise<string>;
  /** The `kid` tokens are signed with now. */
  currentKid(): string;
  /** A new signing key, first in the published set; the old ones stay published. */
  rotateKeys(): Promise<void>;
  stop(): Promise<void>;
}

const REDIRECT_URI = "http://127.0.0.1/callback";
const SIGNING_ALG = "RS256";

interface SigningKey {
  kid: string;
  privateJwk: JWK;
  privateKey: webcrypto.CryptoKey;
  publicKey: webcrypto.CryptoKey;
}

async function newSigningKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = randomUUID();
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: "sig" };
  return { kid, privateJwk, privateKey, publicKey };
}

export async function startIdentityProvider(
  options: IdentityProviderOptions = {},
): Promise<IdentityProvider> {
  const accounts = options.accounts ?? {};
  const scopes = options.scopes ?? ["mcp:tools"];
  const opaque = new Set(options.opaqueResources ?? []);
  const publicClient = { clientId: "mcp-test-client", redirectUri: REDIRECT_URI };
  const introspectionClient = {
    clientId: "toolbus-gateway",
    clientSecret: randomBytes(24).toString("base64url"),
  };
  const cookieKeys = [randomBytes(32).toString("base64url")];
  const counts = new Map<string, number>();
  const overrides = new Map<string, { status: number; body?: string } | "hang">();
  const keys: SigningKey[] = [await newSigningKey()];
  const webClients: Array<NonNullable<Configuration["clients"]>[number]> = [];

  let provider: Provider | undefined;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const override = overrides.get(path);
    if (override === "hang") return;
    if (override) {
      response.writeHead(override.status, { "content-type": "application/json" }).end(override.body ?? "");
      return;
    }
    if (!provider) {
      response.writeHead(503).end();
      return;
    }
    provider.callback()(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration = (): Configuration => ({
    clients: [
      {
        client_id: publicClient.clientId,
        token_endpoint_auth_method: "none",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      {
        client_id: introspectionClient.clientId,
        client_secret: introspectionClient.clientSecret,
        token_endpoint_auth_method: "client_secret_basic",
        redirect_uris: [],
        grant_types: [],
        response_types: [],
      },
      ...webClients,
    ],
    jwks: { keys: keys.map((key) => key.privateJwk) as never },
    cookies: { keys: cookieKeys },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, ...(accounts[id]?.name ? { name: accounts[id].name } : {}) }),
    }),
    // Who the token is for, in the token: what a resource server maps to a role.
    extraTokenClaims: (_ctx, token) => {
      const accountId = (token as { accountId?: string }).accountId;
      const account = accountId === undefined ? undefined : accounts[accountId];
      return {
        ...(account?.name ? { name: account.name } : {}),
        ...(account?.groups ? { groups: account.groups } : {}),
      };
    },
    scopes: ["openid", "offline_access", ...scopes],
    ttl: {
      AccessToken: options.accessTokenTtlSec ?? 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    features: {
      devInteractions: { enabled: true },
      // Any authenticated client may introspect: the gateway's is the only confidential one.
      introspection: { enabled: true, allowedPolicy: () => true },
      resourceIndicators: {
        enabled: true,
        // One resource per authorization: the token exchange need not name it again.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, resourceIndicator: string) => ({
          scope: scopes.join(" "),
          accessTokenFormat: opaque.has(resourceIndicator) ? "opaque" : "jwt",
          jwt: { sign: { alg: SIGNING_ALG } },
        }),
      },
    },
  });
  const build = () => {
    const next = new Provider(issuer, configuration());
    // The development login form and a loopback issuer are the point here.
    next.proxy = false;
    return next;
  };
  provider = build();

  const requestsOf = (path: string) => counts.get(path) ?? 0;

  const authorize = async (authorizationUrl: string | URL, login: string) => {
    const jar = new CookieJar();
    let url = new URL(authorizationUrl, issuer);
    let body: URLSearchParams | undefined;
    for (let step = 0; step < 12; step++) {
      // Off the provider's own origin: back at the client's redirect URI.
      if (url.origin !== issuer) {
        const code = url.searchParams.get("code");
        if (code === null) {
          throw new Error(
            `the identity provider sent back no code: ${url.searchParams.get("error")} ${url.searchParams.get("error_description") ?? ""}`,
          );
        }
        return { code, state: url.searchParams.get("state") ?? undefined, url };
      }
      const response = await fetch(url, {
        method: body ? "POST" : "GET",
        redirect: "manual",
        headers: {
          cookie: jar.header(),
          ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        },
        ...(body ? { body: body.toString() } : {}),
      });
      jar.take(response.headers.getSetCookie());
      body = undefined;
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url);
        continue;
      }
      const page = await response.text();
      if (response.status !== 200) {
        throw new Error(
          `the identity provider answered ${response.status} at ${url.pathname}: ${page.slice(0, 500)}`,
        );
      }
      // The development forms: a login (any login, any password) or a consent.
      const prompt = /name="prompt" value="(login|consent)"/.exec(page)?.[1];
      if (prompt === undefined)
        throw new Error(`no login or consent form at ${url.pathname}: ${page.slice(0, 500)}`);
      body = new URLSearchParams(prompt === "login" ? { prompt, login, password: "any" } : { prompt });
    }
    throw new Error("the identity provider kept redirecting; gave up after 12 steps");
  };

  const accessToken = async ({
    login,
    resource,
    scope,
  }: {
    login: string;
    resource: string;
    scope?: string;
  }) => {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const state = randomUUID();
    const url = new URL("/auth", issuer);
    url.search = new URLSearchParams({
      client_id: publicClient.clientId,
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      scope: scope ?? scopes.join(" "),
      resource,
      state,
      code_challenge: challenge,
      code_challenge_method: "S256",
    }).toString();
    const { code } = await authorize(url, login);
    const response = await fetch(new URL("/token", issuer), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: publicClient.clientId,
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        resource,
      }).toString(),
    });
    const tokens = (await response.json()) as {
      access_token?: string;
      error?: string;
      error_description?: string;
    };
    if (!tokens.access_token)
      throw new Error(`no access token: ${tokens.error} ${tokens.error_description ?? ""}`);
    return tokens.access_token;
  };

  const current = () => keys[0] as SigningKey;
  const stranger = await newSigningKey();

  return {
    issuer,
    publicClient,
    introspectionClient,
    requests: requestsOf,
    respondInstead: (path, answer) => {
      if (answer === undefined) overrides.delete(path);
      else overrides.set(path, answer);
    },
    authorize,
    registerClient: ({ clientId, redirectUris, clientSecret }) => {
      webClients.push({
        client_id: clientId,
        redirect_uris: redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        ...(clientSecret === undefined
          ? { token_endpoint_auth_method: "none" }
          : { client_secret: clientSecret, token_endpoint_auth_method: "client_secret_basic" }),
      });
      provider = build();
    },
    accessToken,
    sign: (claims, header = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({
          alg: header.alg ?? SIGNING_ALG,
          kid: header.kid ?? current().kid,
          typ: "at+jwt",
        })
        .sign(current().privateKey),
    signWithUnknownKey: (claims, kid = randomUUID()) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "at+jwt" })
        .sign(stranger.privateKey),
    forgeUnsigned: (claims) => new UnsecuredJWT(claims).encode(),
    forgeHmacWithPublicKey: async (claims) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "HS256", kid: current().kid, typ: "at+jwt" })
        .sign(new TextEncoder().encode(await exportSPKI(current().publicKey))),
    currentKid: () => current().kid,
    rotateKeys: async () => {
      keys.unshift(await newSigningKey());
      provider = build();
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The cookies a user agent keeps for one walk through the provider (names only; paths ignored). */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  take(setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";");
      const equals = pair.indexOf("=");
      if (equals < 1) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key = "", date = ""] = attribute.split("=");
        return key.trim().toLowerCase() === "expires" && Date.parse(date) <= Date.now();
      });
      if (expired || value === "") this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/**
 * What an MCP SDK client needs to sign in at `idp` as its pre-registered public client: the
 * SDK discovers the rest from the server it connects to. `redirectToAuthorization` only keeps
 * the URL; a test walks it with `idp.authorize(…)` and hands the code to the transport's
 * `finishAuth`, as a browser and a redirect listener would.
 */
export class TestOAuthClient implements OAuthClientProvider {
  /** Where the SDK sent the user last (undefined until it did). */
  authorizationUrl: URL | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier: string | undefined;
  readonly #client: IdentityProvider["publicClient"];

  constructor(idp: Pick<IdentityProvider, "publicClient">) {
    this.#client = idp.publicClient;
  }

  get redirectUrl(): string {
    return this.#client.redirectUri;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "toolbus test client",
      redirect_uris: [this.#client.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return { client_id: this.#client.clientId };
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined)
      throw new Error("no PKCE code verifier was saved: the flow never started");
    return this.#verifier;
  }
}
