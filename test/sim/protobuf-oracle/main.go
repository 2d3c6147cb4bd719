// The oracle for test/sim/protobuf-body.test.ts: Kubernetes' own Go types and serializers write a
// few objects both as the protobuf body a Go client sends and as the JSON Go gives the same object.
// Run: go run . > ../protobuf-oracle.json (with k8s.io/api and k8s.io/apimachinery in the module cache).
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type sample struct {
	Name     string          `json:"name"`
	Protobuf []byte          `json:"protobuf"`
	JSON     json.RawMessage `json:"json"`
}

func ptr[T any](v T) *T { return &v }

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, discoveryv1.AddToScheme, autoscalingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Group: "apps", Version: "v1"})
	serializer := protobuf.NewSerializer(scheme, scheme)
	created := metav1.NewTime(time.Date(2026, 12, 1, 17, 20, 50, 0, time.UTC))

	labels := map[string]string{"app": "web", "tier": "front"}
	container := corev1.Container{
		Name: "lab", Image: "termlab/lab-server:0.1.0",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "LAB_MODE", Value: "graceful"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("500m")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")},
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
		LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, InitialDelaySeconds: 0, TerminationGracePeriodSeconds: ptr(int64(0))},
		Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
		VolumeMounts:   []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
	}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Labels: labels, Annotations: map[string]string{"b": "2", "a": "1"}, CreationTimestamp: created,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1", Time: &created, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: labels, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromString("25%")), MaxUnavailable: ptr(intstr.FromInt32(0))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr(int64(0)),
					AutomountServiceAccountToken:  ptr(false),
					Containers:                    []corev1.Container{container},
					Volumes:                       []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Gi"))}}}},
				},
			},
		},
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Selector: labels,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}, {Name: "raw", Port: 81, Protocol: corev1.ProtocolTCP}},
		},
	}
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "lab-", DeletionGracePeriodSeconds: ptr(int64(0))},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "lab", Image: "termlab/lab-server:0.1.0", Command: []string{"node", "main.js"}}}, RestartPolicy: corev1.RestartPolicyNever},
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "web-abcde"},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web"},
		Reason:         "Killing", Message: "Stopping container lab", Type: "Normal", Count: 1,
		EventTime: metav1.NewMicroTime(time.Date(2026, 12, 1, 17, 20, 50, 123456789, time.UTC)), FirstTimestamp: created,
	}
	scale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: autoscalingv1.ScaleSpec{Replicas: 0}}
	deleteOptions := &metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0)), PropagationPolicy: ptr(metav1.DeletePropagationForeground), Preconditions: &metav1.Preconditions{UID: ptr[types.UID]("d5a1")}}

	var out []sample
	add := func(name string, obj runtime.Object, gvk schema.GroupVersionKind) {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		var body bytes.Buffer
		if err := serializer.Encode(obj, &body); err != nil {
			panic(err)
		}
		text, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		out = append(out, sample{Name: name, Protobuf: body.Bytes(), JSON: text})
	}
	add("Deployment", deployment, appsv1.SchemeGroupVersion.WithKind("Deployment"))
	add("Service", service, corev1.SchemeGroupVersion.WithKind("Service"))
	add("Namespace", namespace, corev1.SchemeGroupVersion.WithKind("Namespace"))
	add("Pod", pod, corev1.SchemeGroupVersion.WithKind("Pod"))
	add("EndpointSlice", slice, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
	add("Event", event, corev1.SchemeGroupVersion.WithKind("Event"))
	add("Scale", scale, autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	add("DeleteOptions", deleteOptions, schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DeleteOptions"})
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		panic(err)
	}
}
