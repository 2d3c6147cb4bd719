// Added to github.com/abbot/go-http-auth v0.4.1-0.20220112235402-e1cee1c72f2f by termlab's node build
// (dev/node/traefik/README.md): Traefik's digest middleware calls RequireAuthStale, which only its fork
// (github.com/containous/go-http-auth, refused by the module proxy here) has.

package auth

import (
	"fmt"
	"net/http"
	"time"
)

// RequireAuthStale is RequireAuth with stale=true in the challenge (RFC 7616 3.3): the nonce was valid
// but old, so the client may retry with the new one without asking its user again.
func (da *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) {
	da.mutex.RLock()
	clientsLen := len(da.clients)
	da.mutex.RUnlock()

	if clientsLen > da.ClientCacheSize+da.ClientCacheTolerance {
		da.Purge(da.ClientCacheTolerance * 2)
	}
	nonce := RandomKey()

	da.mutex.Lock()
	da.clients[nonce] = &digestClient{nc: 0, lastSeen: time.Now().UnixNano()}
	da.mutex.Unlock()

	da.mutex.RLock()
	w.Header().Set(contentType, da.Headers.V().UnauthContentType)
	w.Header().Set(da.Headers.V().Authenticate,
		fmt.Sprintf(`Digest realm="%s", nonce="%s", opaque="%s", algorithm=MD5, qop="auth", stale=true`,
			da.Realm, nonce, da.Opaque))
	w.WriteHeader(da.Headers.V().UnauthCode)
	w.Write([]byte(da.Headers.V().UnauthResponse))
	da.mutex.RUnlock()
}
