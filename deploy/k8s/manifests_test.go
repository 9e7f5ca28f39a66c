// Package k8s holds the Kubernetes manifests of a streamsql cluster
// (docs/cluster.md, "Deploying on Kubernetes"); this test decodes every
// manifest into the Kubernetes API types, strictly (an unknown or
// misspelt field fails), and checks the fields the workers depend on.
package k8s

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/streamsql/streamsql/parser"
)

// manifests decodes every document of every YAML file here.
func manifests(t *testing.T) (cms []*corev1.ConfigMap, sts []*appsv1.StatefulSet, svcs []*corev1.Service) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "v1 ConfigMap":
				cm := &corev1.ConfigMap{}
				cms, obj = append(cms, cm), cm
			case "apps/v1 StatefulSet":
				s := &appsv1.StatefulSet{}
				sts, obj = append(sts, s), s
			case "v1 Service":
				s := &corev1.Service{}
				svcs, obj = append(svcs, s), s
			default:
				t.Fatalf("%s #%d: unexpected kind %q %q", f, i, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
		}
	}
	if len(cms) != 1 || len(sts) != 1 || len(svcs) != 1 {
		t.Fatalf("want one ConfigMap, StatefulSet and Service; have %d, %d, %d", len(cms), len(sts), len(svcs))
	}
	return cms, sts, svcs
}

// flags parses a container's args the way Go's flag package reads
// them: --name=value or --name value.
func flags(t *testing.T, args []string) (sub string, out map[string][]string) {
	if len(args) == 0 {
		t.Fatal("no args")
	}
	out = map[string][]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			t.Fatalf("stray argument %q", a)
		}
		name, val, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok {
			if i+1 >= len(args) {
				t.Fatalf("flag %q has no value", a)
			}
			i++
			val = args[i]
		}
		out[name] = append(out[name], val)
	}
	return args[0], out
}

func TestManifests(t *testing.T) {
	cms, sts, svcs := manifests(t)
	cm, ss, svc := cms[0], sts[0], svcs[0]

	// The job file parses.
	job, ok := cm.Data["job.sql"]
	if !ok {
		t.Fatalf("ConfigMap %s has no job.sql: %v", cm.Name, cm.Data)
	}
	if _, err := parser.Parse(job); err != nil {
		t.Fatalf("job.sql: %v", err)
	}

	// The StatefulSet's pods are the ones it selects, and its Service
	// governs it.
	pod := ss.Spec.Template
	for k, v := range ss.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("the pod template lacks the selector's label %s=%s", k, v)
		}
	}
	if ss.Spec.ServiceName != svc.Name {
		t.Errorf("serviceName %q, the Service is %q", ss.Spec.ServiceName, svc.Name)
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods lack", k, v)
		}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if !strings.HasPrefix(c.Image, "streamsql:") {
		t.Errorf("image %q is not the Dockerfile's", c.Image)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %v overrides the image's entrypoint", c.Command)
	}
	sub, fl := flags(t, c.Args)
	if sub != "worker" {
		t.Fatalf("args run %q, not the worker", sub)
	}
	for _, name := range []string{"bootstrap-servers", "f", "metrics-addr"} {
		if len(fl[name]) != 1 {
			t.Fatalf("--%s given %d times: %v", name, len(fl[name]), c.Args)
		}
	}
	known := []string{"bootstrap-servers", "f", "i", "metrics-addr", "name", "connect-timeout", "session-timeout", "set", "var"}
	for name := range fl {
		if !slices.Contains(known, name) {
			t.Errorf("--%s is not a flag of streamsql worker", name)
		}
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	// Every $(VAR) in the args is defined in the container's env.
	for _, a := range c.Args {
		for rest := a; strings.Contains(rest, "$("); {
			_, after, _ := strings.Cut(rest, "$(")
			name, tail, _ := strings.Cut(after, ")")
			if _, ok := env[name]; !ok {
				t.Errorf("arg %q uses $(%s), which env does not define", a, name)
			}
			rest = tail
		}
	}
	if !strings.HasPrefix(env["CHECKPOINT_DIR"].Value, "s3://") && !strings.HasPrefix(env["CHECKPOINT_DIR"].Value, "file:///") {
		t.Errorf("CHECKPOINT_DIR %q is neither s3:// nor a shared file:/// volume", env["CHECKPOINT_DIR"].Value)
	}
	if !slices.Contains(fl["var"], "checkpoints=$(CHECKPOINT_DIR)") || !strings.Contains(job, "'state.checkpoints.dir' = '${checkpoints}'") {
		t.Errorf("the checkpoint store does not reach state.checkpoints.dir: vars %v", fl["var"])
	}

	// -f names job.sql in the ConfigMap's volume.
	var jobVol string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			jobVol = v.Name
		}
	}
	if jobVol == "" {
		t.Fatalf("no volume holds ConfigMap %s", cm.Name)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == jobVol && filepath.Join(m.MountPath, "job.sql") == fl["f"][0] {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("-f %s is not job.sql of the mounted ConfigMap", fl["f"][0])
	}
	// TMPDIR (the local working copy) is writable: a mounted volume
	// when the root file system is read-only.
	if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		tmp := env["TMPDIR"].Value
		ok := false
		for _, m := range c.VolumeMounts {
			ok = ok || (tmp != "" && !m.ReadOnly && (tmp == m.MountPath || strings.HasPrefix(tmp, m.MountPath+"/")))
		}
		if !ok {
			t.Errorf("TMPDIR %q is not on a writable volume, and the root file system is read-only", tmp)
		}
	}

	// The metrics port: the flag, the container port, the probes, the
	// Service and the scrape annotations agree.
	host, port, err := net.SplitHostPort(fl["metrics-addr"][0])
	if err != nil {
		t.Fatal(err)
	}
	if host != "0.0.0.0" && host != "" {
		t.Errorf("--metrics-addr binds %q: a scraper on another pod cannot reach it", host)
	}
	var metricsPort *corev1.ContainerPort
	for i, p := range c.Ports {
		if p.Name == "metrics" {
			metricsPort = &c.Ports[i]
		}
	}
	if metricsPort == nil || metricsPort.ContainerPort == 0 || port != itoa(metricsPort.ContainerPort) {
		t.Fatalf("container port metrics %+v, --metrics-addr port %s", metricsPort, port)
	}
	for what, ann := range map[string]map[string]string{"pod": pod.Annotations, "service": svc.Annotations} {
		if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != port || ann["prometheus.io/path"] != "/metrics" {
			t.Errorf("%s annotations %v do not point a scraper at :%s/metrics", what, ann, port)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" || itoa(svc.Spec.Ports[0].Port) != port {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
	for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", what)
			continue
		}
		if tp := p.HTTPGet.Port; tp.String() != "metrics" && tp.String() != port {
			t.Errorf("%s probe on port %s, not the metrics endpoint's", what, tp.String())
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("no resource requests: %+v", c.Resources.Requests)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
