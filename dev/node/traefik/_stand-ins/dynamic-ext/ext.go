// Stands in for github.com/traefik/traefik/dynamic/ext, a nested module of Traefik's repository that its
// v3.7.13 module zip leaves out and the module proxy here refuses (dev/node/traefik/README.md).
// Upstream it is an extension point holding empty types; so is this.

package ext

// HTTP extends dynamic.HTTPConfiguration (inlined there); empty in open-source Traefik.
type HTTP struct{}

// Router extends dynamic.Router (inlined there); empty in open-source Traefik.
type Router struct{}
