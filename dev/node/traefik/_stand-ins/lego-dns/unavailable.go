// Stands in, in termlab's node build of Traefik (dev/node/traefik/README.md), for one of lego's DNS
// providers whose cloud SDK the module proxy here refuses (403). The build writes it into each such
// provider's package with that package's name; the ACME DNS challenge with it fails at once.

package unavailable

import (
	"context"
	"errors"
)

var errUnavailable = errors.New("this DNS provider is not available in termlab's build of Traefik (its SDK is not served by the Go module proxy)")

// DNSProvider is never made: NewDNSProvider fails.
type DNSProvider struct{}

// NewDNSProvider fails: the provider is not built in.
func NewDNSProvider() (*DNSProvider, error) { return nil, errUnavailable }

// Present fails: the provider is not built in.
func (*DNSProvider) Present(context.Context, string, string, string) error { return errUnavailable }

// CleanUp fails: the provider is not built in.
func (*DNSProvider) CleanUp(context.Context, string, string, string) error { return errUnavailable }
