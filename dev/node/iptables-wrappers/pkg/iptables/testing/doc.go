// Package testing is empty here: only the tests of k8s.io/kubernetes import it, and `go mod tidy` in the
// node's module needs the package to exist. Nothing the node builds uses it.
package testing
