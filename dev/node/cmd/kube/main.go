// Command kube is one binary for the five Kubernetes components termlab's CI node runs,
// chosen by the first argument (or by the name it is called as). One link instead of five
// keeps a cold build inside CI's time.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

var components = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy":              proxy.NewProxyCommand,
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := components[name]; !ok && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	newCommand, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: kube {kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy} [flags]\n")
		os.Exit(2)
	}
	command := newCommand()
	command.SetArgs(args)
	os.Exit(cli.Run(command))
}
