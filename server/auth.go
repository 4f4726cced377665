package server

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/golang-jwt/jwt/v5"

	"github.com/reinhq/rein/console"
)

// Auth says how the server learns who calls (SPEC API-4). Identity is
// external: an upstream signs a JWT whose subject is the caller id, or a
// trusted reverse proxy names the caller in a header. With neither
// configured, loopback clients are the Local caller and every other client
// is refused.
type Auth struct {
	// HS256Secret verifies HS256 tokens (at least 32 bytes); empty refuses
	// them.
	HS256Secret []byte
	// PublicKeys verify EdDSA (ed25519.PublicKey) and RS256 (*rsa.PublicKey,
	// at least 2048 bits) tokens; see [LoadPublicKeys]. A token is accepted
	// when any key of its algorithm verifies it. Only the algorithms of the
	// configured keys are accepted: never "none", never HS256 unless
	// HS256Secret is set.
	PublicKeys []crypto.PublicKey
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// TrustedHeader names the header a trusted proxy sets to the caller id
	// (e.g. X-Rein-Caller). It is read only from requests whose remote
	// address lies in TrustedProxies; from anywhere else it is ignored.
	TrustedHeader  string
	TrustedProxies []netip.Prefix
	// Local is the caller id of loopback clients when no authentication is
	// configured (default "local"). It is never used when [Auth.Configured].
	Local string
}

// DefaultLocalCaller is the caller id of loopback clients of a server
// without authentication.
const DefaultLocalCaller = "local"

// maxCallerLen bounds a caller id.
const maxCallerLen = 256

// Configured reports whether callers are authenticated (tokens, or a trusted
// header with proxies to trust). A server that is not must listen on
// loopback only.
func (a Auth) Configured() bool {
	return len(a.HS256Secret) > 0 || len(a.PublicKeys) > 0 || a.TrustedHeader != "" && len(a.TrustedProxies) > 0
}

// LoadPublicKeys reads the PEM files at paths and returns every public key
// they hold: "PUBLIC KEY" blocks (PKIX: Ed25519 or RSA), "RSA PUBLIC KEY"
// blocks (PKCS #1) and the keys of "CERTIFICATE" blocks. Other key types, a
// file without keys and unreadable files are errors.
func LoadPublicKeys(paths ...string) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("server: load public keys: %w", err)
		}
		n := 0
		for {
			var block *pem.Block
			block, data = pem.Decode(data)
			if block == nil {
				break
			}
			k, err := parsePublicKey(block)
			if err != nil {
				return nil, fmt.Errorf("server: load public keys: %s: %w", p, err)
			}
			if k == nil {
				continue // a block of another kind (a comment, a private key's neighbour)
			}
			keys = append(keys, k)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("server: load public keys: %s holds no PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE block", p)
		}
	}
	return keys, nil
}

// parsePublicKey returns the key of a PEM block, nil for blocks that hold
// no public key.
func parsePublicKey(b *pem.Block) (crypto.PublicKey, error) {
	var k any
	var err error
	switch b.Type {
	case "PUBLIC KEY":
		k, err = x509.ParsePKIXPublicKey(b.Bytes)
	case "RSA PUBLIC KEY":
		k, err = x509.ParsePKCS1PublicKey(b.Bytes)
	case "CERTIFICATE":
		var c *x509.Certificate
		c, err = x509.ParseCertificate(b.Bytes)
		if err == nil {
			k = c.PublicKey
		}
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s block: %w", b.Type, err)
	}
	if _, err := keyAlg(k); err != nil {
		return nil, err
	}
	return k, nil
}

// keyAlg returns the JWT algorithm a public key verifies.
func keyAlg(k crypto.PublicKey) (string, error) {
	switch k := k.(type) {
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return "", fmt.Errorf("ed25519 public key of %d bytes", len(k))
		}
		return jwt.SigningMethodEdDSA.Alg(), nil
	case *rsa.PublicKey:
		if k == nil || k.N == nil || k.N.BitLen() < 2048 {
			return "", errors.New("RSA public key shorter than 2048 bits")
		}
		return jwt.SigningMethodRS256.Alg(), nil
	}
	return "", fmt.Errorf("unsupported public key type %T (want Ed25519 or RSA)", k)
}

// authenticator finds the caller of a request.
type authenticator struct {
	auth    Auth
	methods []string                         // valid JWT algorithms
	keys    map[string][]jwt.VerificationKey // by algorithm
	parser  *jwt.Parser
	// console, when set, holds the web console's sign-ins: a request
	// carrying its cookie is that sign-in's caller (SPEC API-10).
	console *console.Console
}

func newAuthenticator(a Auth, now func() time.Time) (*authenticator, error) {
	if a.Local == "" {
		a.Local = DefaultLocalCaller
	}
	if err := checkCaller(a.Local); err != nil {
		return nil, fmt.Errorf("server: auth: local caller: %w", err)
	}
	if a.TrustedHeader != "" && len(a.TrustedProxies) == 0 {
		return nil, errors.New("server: auth: a trusted header needs the proxies to trust it from (TrustedProxies)")
	}
	au := &authenticator{auth: a, keys: map[string][]jwt.VerificationKey{}}
	if len(a.HS256Secret) > 0 {
		if len(a.HS256Secret) < 32 {
			return nil, errors.New("server: auth: HS256 secret shorter than 32 bytes")
		}
		au.keys[jwt.SigningMethodHS256.Alg()] = []jwt.VerificationKey{a.HS256Secret}
	}
	for _, k := range a.PublicKeys {
		alg, err := keyAlg(k)
		if err != nil {
			return nil, fmt.Errorf("server: auth: %w", err)
		}
		au.keys[alg] = append(au.keys[alg], k)
	}
	for _, alg := range []string{"HS256", "EdDSA", "RS256"} {
		if len(au.keys[alg]) > 0 {
			au.methods = append(au.methods, alg)
		}
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods(au.methods), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(now), jwt.WithLeeway(tokenLeeway)}
	if a.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.Issuer))
	}
	if a.Audience != "" {
		opts = append(opts, jwt.WithAudience(a.Audience))
	}
	au.parser = jwt.NewParser(opts...)
	return au, nil
}

// authError is a refused request: Detail is the problem's detail and
// Challenge the WWW-Authenticate header; Status is 401 unless set (403: a
// console cookie's write without its CSRF token).
type authError struct {
	Detail    string
	Challenge string
	Status    int
}

// status is the HTTP status of the refusal.
func (e *authError) status() int {
	if e.Status != 0 {
		return e.Status
	}
	return http.StatusUnauthorized
}

func (e *authError) Error() string { return e.Detail }

// tokenLeeway is the clock skew allowed when checking a token's exp (and
// nbf, iat): a token is accepted until exp+tokenLeeway, and an event
// stream opened with it ends then.
const tokenLeeway = 30 * time.Second

// credential is who a request's caller is and until when the proof holds:
// Until is the zero time for credentials that do not expire (a trusted
// proxy's header, the local caller); for a token, exp plus tokenLeeway.
type credential struct {
	Caller string
	Until  time.Time
	// Via says how the caller was identified: "proxy", "bearer",
	// "cookie" (the console's sign-in) or "local".
	Via string
}

// authenticate returns the caller of r and until when its credential holds.
func (a *authenticator) authenticate(r *http.Request) (credential, *authError) {
	if h := a.auth.TrustedHeader; h != "" && a.fromTrustedProxy(r) {
		if vs := r.Header.Values(h); len(vs) > 1 {
			// A proxy that appends its header to one the client sent passes
			// both, the client's first: neither can be believed.
			return credential{}, &authError{Detail: fmt.Sprintf("the %s header came %d times: the proxy must set it once, replacing any the client sent "+
				"(nginx's proxy_set_header does; an appending rule does not)", h, len(vs)), Challenge: `Bearer realm="rein"`}
		}
		if v := r.Header.Get(h); v != "" {
			if err := a.checkRemoteCaller(v); err != nil {
				return credential{}, &authError{Detail: fmt.Sprintf("the %s header set by the proxy is not a valid caller id: %v", h, err), Challenge: `Bearer realm="rein"`}
			}
			return credential{Caller: v, Via: "proxy"}, nil
		}
	}
	raw, hasToken, err := bearer(r)
	if err != nil {
		return credential{}, err
	}
	if hasToken && len(a.methods) > 0 {
		return a.verify(raw)
	}
	if a.console != nil {
		// A console cookie is its sign-in's caller only while valid: a
		// stale or forged one is refused, never served as the local
		// caller; a write made with it needs its CSRF token (SPEC API-10).
		if cs, present, err := a.console.Lookup(r); present {
			if err != nil {
				return credential{}, &authError{Detail: err.Error(), Challenge: `Bearer realm="rein"`}
			}
			if writes(r) {
				if err := cs.CheckCSRF(r); err != nil {
					return credential{}, &authError{Detail: err.Error(), Status: http.StatusForbidden}
				}
			}
			return credential{Caller: cs.Caller, Until: cs.Expires, Via: "cookie"}, nil
		}
	}
	if !a.auth.Configured() {
		if loopback(r) {
			return credential{Caller: a.auth.Local, Via: "local"}, nil
		}
		return credential{}, &authError{Detail: "this server has no authentication configured and serves only loopback clients: run it with token keys or a trusted proxy header to accept others",
			Challenge: `Bearer realm="rein"`}
	}
	detail := "no credentials: send Authorization: Bearer <JWT>"
	if len(a.methods) > 0 {
		detail += fmt.Sprintf(" (a token signed with %s whose sub names the caller and that has exp)", strings.Join(a.methods, ", "))
	} else {
		detail = "no credentials: this server accepts callers only through its trusted proxy"
	}
	return credential{}, &authError{Detail: detail, Challenge: `Bearer realm="rein"`}
}

// writes reports whether r may change state (any method but GET, HEAD and
// OPTIONS).
func writes(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(r *http.Request) (string, bool, *authError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false, nil
	}
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return "", false, &authError{Detail: "malformed Authorization header: want Authorization: Bearer <JWT>",
			Challenge: `Bearer realm="rein", error="invalid_request"`}
	}
	return strings.TrimSpace(tok), true, nil
}

// verify checks a token and returns its subject and expiry.
func (a *authenticator) verify(raw string) (credential, *authError) {
	var claims jwt.RegisteredClaims
	_, err := a.parser.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		keys := a.keys[t.Method.Alg()]
		if len(keys) == 0 {
			return nil, fmt.Errorf("algorithm %s not accepted", t.Method.Alg())
		}
		return jwt.VerificationKeySet{Keys: keys}, nil
	})
	if err == nil {
		err = a.checkRemoteCaller(claims.Subject)
		if err != nil {
			err = fmt.Errorf("sub: %w", err)
		}
	}
	if err != nil {
		return credential{}, &authError{
			Detail:    fmt.Sprintf("invalid token: %v; get a new token signed with %s, with sub and exp", err, strings.Join(a.methods, ", ")),
			Challenge: `Bearer realm="rein", error="invalid_token"`,
		}
	}
	// exp is required, so ExpiresAt is set.
	return credential{Caller: claims.Subject, Until: claims.ExpiresAt.Add(tokenLeeway), Via: "bearer"}, nil
}

// fromTrustedProxy reports whether r comes from one of the trusted proxies.
func (a *authenticator) fromTrustedProxy(r *http.Request) bool {
	ip, ok := remoteIP(r)
	if !ok {
		return false
	}
	for _, p := range a.auth.TrustedProxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// remoteIP is the address of r's peer.
func remoteIP(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// loopback reports whether r comes from this machine.
func loopback(r *http.Request) bool {
	ip, ok := remoteIP(r)
	return ok && ip.IsLoopback()
}

// checkRemoteCaller checks the caller id a token or a trusted proxy gives:
// a valid id (checkCaller) that is not the local caller's. The local id
// (Auth.Local, and DefaultLocalCaller, which the runner gives a run
// without a caller) names the operator of a loopback server without
// authentication: the sessions, workspaces and kept "always" rules of
// such a server's runs are stored under it, and a data directory outlives
// a restart with authentication. A remote caller whose sub is "local" (a
// name an identity provider may let anyone register) would inherit them
// (SPEC API-9).
func (a *authenticator) checkRemoteCaller(id string) error {
	if err := checkCaller(id); err != nil {
		return err
	}
	if id == a.auth.Local || id == DefaultLocalCaller {
		return fmt.Errorf("the caller id %q is reserved for the operator of a loopback server without authentication "+
			"(its sessions and kept rules are stored under it): give this caller another id", id)
	}
	return nil
}

// checkCaller validates a caller id: 1 to 256 printable characters.
func checkCaller(id string) error {
	if id == "" {
		return errors.New("empty caller id")
	}
	if len(id) > maxCallerLen {
		return fmt.Errorf("caller id longer than %d bytes", maxCallerLen)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("caller id holds the non-printable character %q", r)
		}
	}
	return nil
}
