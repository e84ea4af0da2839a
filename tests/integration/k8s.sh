# The Kubernetes DaemonSet as a cluster operator needs it, checked with
# kubectl on the client side (no cluster here: kubectl parses and decodes
# the objects; python3 then reads what an operator relies on). That it runs
# the unit's command with the unit's capabilities is service.sh's test.

REPO=$(cd "$DYNPROF_TESTS/.." && pwd)
DAEMONSET=$REPO/tools/k8s/dynprof-daemonset.yaml

# ds_check PYTHON: run with `ds` the DaemonSet as kubectl decoded it; it prints what is wrong.
ds_check() {
	command -v kubectl > /dev/null || fail "kubectl not installed (Debian: kubernetes-client; make test-deps)"
	kubectl label --local -f "$DAEMONSET" checked=yes -o json > $T/objects.json 2> $T/kubectl.err ||
		fail "kubectl cannot read the manifest: $(cat $T/kubectl.err)"
	python3 - "$T/objects.json" "$1" > $T/check.out 2>&1 <<-'PY'
	import json, sys
	text = open(sys.argv[1]).read()
	dec, objs, i = json.JSONDecoder(), [], 0
	while i < len(text):
	    if text[i].isspace():
	        i += 1
	        continue
	    o, i = dec.raw_decode(text, i)
	    objs.append(o)
	kinds = [o["kind"] for o in objs]
	if kinds != ["Namespace", "DaemonSet"]:
	    print("objects:", kinds)
	    sys.exit(0)
	ds = objs[1]
	exec(sys.argv[2])
	PY
	[ ! -s $T/check.out ] || fail "$(cat $T/check.out)"
}

test_daemonset_tolerates_tainted_accelerator_nodes() {
	ds_check '
def tolerated(t, taint):
    if t.get("effect") and t["effect"] != taint["effect"]:
        return False
    if t.get("operator") == "Exists":
        return not t.get("key") or t["key"] == taint["key"]
    return t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", "")
tol = ds["spec"]["template"]["spec"].get("tolerations", [])
for taint in ({"key": "huawei.com/Ascend910", "effect": "NoSchedule"},
              {"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"}):
    if not any(tolerated(t, taint) for t in tol):
        print("a node tainted", taint, "gets no dynprof: tolerations", tol)
'
}

test_daemonset_engine_state_follows_the_hosts_mounts() {
	ds_check '
c = ds["spec"]["template"]["spec"]["containers"][0]
vols = {v["name"]: v for v in ds["spec"]["template"]["spec"]["volumes"]}
for m in c["volumeMounts"]:
    if m["name"] not in vols:
        print("mount", m["name"], "has no volume")
    if m["mountPath"] not in ("/var/lib/dynprof", "/run/dynprof") and not m.get("readOnly"):
        print("mount", m["mountPath"], "is writable")
paths = {m["mountPath"]: m for m in c["volumeMounts"]}
for p in ("/run/containerd", "/run/containers", "/var/lib/containers/storage",
          "/var/lib/docker/containers", "/var/lib/nerdctl", "/home"):
    if p not in paths:
        print("no mount of", p)
    elif paths[p].get("mountPropagation") != "HostToContainer":
        print(p, "is a private copy:", paths[p].get("mountPropagation", "None"))
if paths.get("/etc/passwd", {}).get("readOnly") is not True:
    print("no read-only host passwd: rootless owners and homes are not the hosts")
'
}

test_daemonset_apparmor_is_unconfined_before_and_after_kubernetes_1_30() {
	ds_check '
t = ds["spec"]["template"]
c = t["spec"]["containers"][0]
ann = t["metadata"].get("annotations", {}).get("container.apparmor.security.beta.kubernetes.io/" + c["name"])
field = c.get("securityContext", {}).get("appArmorProfile", {}).get("type")
if ann != "unconfined":
    print("no AppArmor annotation for clusters before 1.30:", ann)
if field != "Unconfined":
    print("no appArmorProfile field:", field)
'
}
