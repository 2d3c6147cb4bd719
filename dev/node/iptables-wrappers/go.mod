// A stand-in for sigs.k8s.io/iptables-wrappers v1.0.0, which Kubernetes 1.38's kubelet and kube-proxy import
// and which the Go module proxy here does not serve (403). dev/node/versions.ts replaces the module with
// this folder only when the proxy refuses it. See README.md.
module sigs.k8s.io/iptables-wrappers

go 1.26.0

require (
	k8s.io/apimachinery v0.37.2
	k8s.io/klog/v2 v2.140.0
	k8s.io/utils v0.0.0-20260626114624-be93311217bd
)

require github.com/go-logr/logr v1.4.3 // indirect
