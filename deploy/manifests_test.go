package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests decodes every document of kubernetes/*.yaml strictly into
// its k8s.io/api type: an unknown or misspelt field, a duplicate key or a
// wrong type fails.
type manifests struct {
	jobs     []*batchv1.Job
	services []*corev1.Service
	maps     []*corev1.ConfigMap
	secrets  []*corev1.Secret
}

func load(t *testing.T, glob string) *manifests {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests %s: %v", glob, err)
	}
	m := &manifests{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			where := fmt.Sprintf("%s document %d", f, i)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "batch/v1 Job":
				j := &batchv1.Job{}
				m.jobs, obj = append(m.jobs, j), j
			case "v1 Service":
				s := &corev1.Service{}
				m.services, obj = append(m.services, s), s
			case "v1 ConfigMap":
				c := &corev1.ConfigMap{}
				m.maps, obj = append(m.maps, c), c
			case "v1 Secret":
				s := &corev1.Secret{}
				m.secrets, obj = append(m.secrets, s), s
			default:
				t.Fatalf("%s: unexpected %s %s", where, tm.APIVersion, tm.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: strict decoding: %v", where, err)
			}
		}
	}
	return m
}

// want checks that m holds jobs Jobs, services Services, maps ConfigMaps
// and secrets Secrets.
func (m *manifests) want(t *testing.T, jobs, services, maps, secrets int) {
	t.Helper()
	if len(m.jobs) != jobs || len(m.services) != services || len(m.maps) != maps || len(m.secrets) != secrets {
		t.Fatalf("want %d Job, %d Service, %d ConfigMap and %d Secret; have %d, %d, %d, %d",
			jobs, services, maps, secrets, len(m.jobs), len(m.services), len(m.maps), len(m.secrets))
	}
}

func stripComments(doc string) string {
	var b bytes.Buffer
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// flag returns the value of --name=V or --name V in args.
func flag(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

func TestManifests(t *testing.T) {
	m := load(t, "kubernetes/*.yaml")
	m.want(t, 1, 1, 1, 1)
	checkShardJob(t, m.jobs[0], m.services[0], m.maps[0], m.secrets[0], "req", "conn")
}

// TestRateManifests: kubernetes/rate/ is a sharded rate run, the Job and
// its plan, with the headless Service and the token Secret of
// kubernetes/; a poisson schedule carries one --seed for every shard, and
// each shard's slots cover its share of the max rate × timeout.
func TestRateManifests(t *testing.T) {
	base := load(t, "kubernetes/*.yaml")
	m := load(t, "kubernetes/rate/*.yaml")
	m.want(t, 1, 0, 1, 0)
	job, plan := m.jobs[0], m.maps[0]
	checkShardJob(t, job, base.services[0], plan, base.secrets[0], "rate")
	if job.Name == base.jobs[0].Name || plan.Name == base.maps[0].Name {
		t.Errorf("the rate Job %q and plan %q must not take the names of kubernetes/'s %q and %q", job.Name, plan.Name, base.jobs[0].Name, base.maps[0].Name)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	value := func(name string) string {
		v, _ := flag(args, name)
		return regexp.MustCompile(`\$\(([A-Z_0-9]+)\)`).ReplaceAllStringFunc(v, func(ref string) string { return plan.Data[ref[2:len(ref)-1]] })
	}
	for _, f := range []string{"rate-depth", "arrivals", "start", "pace", "max"} {
		if value(f) == "" {
			t.Errorf("--%s is not set", f)
		}
	}
	if value("arrivals") == "poisson" && value("seed") == "" {
		t.Error("a sharded poisson schedule needs one --seed for every shard")
	}
	n := int(*job.Spec.Completions)
	var conns, depth, rate int
	var timeoutMs float64
	fmt.Sscan(value("conn"), &conns)
	fmt.Sscan(value("rate-depth"), &depth)
	fmt.Sscan(value("max"), &rate)
	if d, err := time.ParseDuration(value("timeout")); err == nil {
		timeoutMs = float64(d.Milliseconds())
	}
	if conns < n || float64(conns/n*depth) < float64(rate)/float64(n)*timeoutMs/1000 {
		t.Errorf("--conn %d × --rate-depth %d over %d shards is below each shard's share of %d requests/s × %v ms (Little's law)", conns, depth, n, rate, timeoutMs)
	}
}

// checkShardJob checks an Indexed Job of shards of one of tests with its
// headless Service, plan ConfigMap and token Secret.
func checkShardJob(t *testing.T, job *batchv1.Job, svc *corev1.Service, plan *corev1.ConfigMap, token *corev1.Secret, tests ...string) {
	t.Helper()
	s := job.Spec

	// An Indexed Job of N shards that fails as a whole on any failure.
	switch {
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Error("completionMode must be Indexed")
	case s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1:
		t.Error("completions and parallelism must be the same shard count")
	case s.BackoffLimit == nil || *s.BackoffLimit != 0:
		t.Error("backoffLimit must be 0: a shard cannot rejoin a run in progress")
	case s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds <= 0:
		t.Error("activeDeadlineSeconds must bound the run")
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Error("restartPolicy must be Never")
	}
	n := int(*s.Completions)
	if s.PodFailurePolicy == nil {
		t.Fatal("no podFailurePolicy")
	}
	failsOnExit, failsOnDisruption := false, false
	for _, r := range s.PodFailurePolicy.Rules {
		if r.Action != batchv1.PodFailurePolicyActionFailJob {
			t.Errorf("pod failure policy rule %+v does not fail the Job", r)
		}
		if e := r.OnExitCodes; e != nil && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && slices.Equal(e.Values, []int32{0}) {
			failsOnExit = true
		}
		for _, c := range r.OnPodConditions {
			if c.Type == corev1.DisruptionTarget {
				failsOnDisruption = true
			}
		}
	}
	if !failsOnExit || !failsOnDisruption {
		t.Errorf("the pod failure policy must fail the Job on any non-zero exit (%v) and on a disruption (%v)", failsOnExit, failsOnDisruption)
	}

	// The shard's command line: --shards N (index from
	// JOB_COMPLETION_INDEX), shard 0 at <job>-0.<subdomain>:<port>.
	pod := s.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, have %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if got, _ := flag(c.Args, "shards"); got != fmt.Sprint(n) {
		t.Errorf("--shards %q, want the Job's completions %d", got, n)
	}
	if _, ok := flag(c.Args, "shard"); ok {
		t.Error("--shard I/N in an Indexed Job: use --shards N (the index comes from JOB_COMPLETION_INDEX)")
	}
	coord, _ := flag(c.Args, "coordinator")
	host, port, ok := strings.Cut(coord, ":")
	if want := job.Name + "-0." + pod.Subdomain; !ok || host != want {
		t.Errorf("--coordinator %q, want %s:PORT (shard 0's name through the headless Service)", coord, want)
	}
	if listen, _ := flag(c.Args, "coordinator-listen"); listen != ":"+port {
		t.Errorf("--coordinator-listen %q, want :%s", listen, port)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return fmt.Sprint(p.ContainerPort) == port }) {
		t.Errorf("the container does not declare the coordinator port %s", port)
	}

	// The headless Service selects the shard pods under the subdomain.
	switch {
	case svc.Name != pod.Subdomain:
		t.Errorf("Service %q is not the pods' subdomain %q", svc.Name, pod.Subdomain)
	case svc.Spec.ClusterIP != corev1.ClusterIPNone:
		t.Error("the Service must be headless (clusterIP: None)")
	case !svc.Spec.PublishNotReadyAddresses:
		t.Error("the Service must publish not-ready addresses: shards dial shard 0 as soon as it runs")
	}
	for k, v := range svc.Spec.Selector {
		if s.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods lack", k, v)
		}
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("the Service selects nothing")
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return fmt.Sprint(p.Port) == port }) {
		t.Errorf("the Service does not expose the coordinator port %s", port)
	}

	// The plan from the ConfigMap, the token from the Secret.
	env := map[string]bool{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef == nil || e.ConfigMapRef.Name != plan.Name {
			t.Errorf("envFrom %+v is not the plan ConfigMap %s", e, plan.Name)
		}
		for k := range plan.Data {
			env[k] = true
		}
	}
	tokenOK := false
	for _, e := range c.Env {
		env[e.Name] = true
		if e.Name == "BRK_TOKEN" {
			r := e.ValueFrom
			tokenOK = r != nil && r.SecretKeyRef != nil && r.SecretKeyRef.Name == token.Name &&
				(token.StringData[r.SecretKeyRef.Key] != "" || len(token.Data[r.SecretKeyRef.Key]) > 0)
		}
	}
	if !tokenOK {
		t.Error("BRK_TOKEN must come from a key of the Secret")
	}
	for _, a := range c.Args {
		for _, ref := range regexp.MustCompile(`\$\(([A-Z_0-9]+)\)`).FindAllStringSubmatch(a, -1) {
			if !env[ref[1]] {
				t.Errorf("argument %q refers to %s, which no ConfigMap key or env sets", a, ref[1])
			}
		}
	}
	if len(c.Args) == 0 || !slices.Contains(tests, c.Args[0]) {
		t.Errorf("args must start with the test (%s): %q", strings.Join(tests, " or "), c.Args)
	}
	if c.Resources.Limits.Cpu().IsZero() {
		t.Error("the container needs a CPU limit: --threads should match it")
	}
}

// TestStrictDecodingRefusesUnknownFields: the validation catches a typo.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMod: Indexed\n"
	if err := yaml.UnmarshalStrict([]byte(doc), &batchv1.Job{}); err == nil {
		t.Fatal("a misspelt field passed strict decoding")
	}
}
