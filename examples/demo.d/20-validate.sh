# step: usdgrip validate — the examples pass, the broken ones fail with their codes (GR.012's warns)
echo "\$ usdgrip rules"
usdgrip rules
for f in examples/gripper.usda examples/tote.usda examples/mug.usda; do
    echo "\$ usdgrip validate $f"
    usdgrip validate "$f"
done
echo "\$ usdgrip validate examples/simready_2f85.usda   # missing payload, legacy authoring"
usdgrip validate examples/simready_2f85.usda 2>/dev/null && status=0 || status=$?
echo "(exit $status)"
echo "\$ usdgrip validate examples/broken/*.usda --format json --output out/validate-broken.json"
usdgrip validate examples/broken/*.usda --format json --output out/validate-broken.json 2>/dev/null \
    && status=0 || status=$?
python3 - out/validate-broken.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for entry in report["files"]:
    codes = sorted({i["code"] for i in entry["issues"] if i["severity"] in ("failure", "error")})
    warned = sorted({i["code"] for i in entry["issues"] if i["severity"] == "warning"})
    print(f"  {entry['path']}: {', '.join(codes) or 'passes, warning ' + ', '.join(warned)}")
PY
echo "(exit $status: failures found, as intended)"
usdgrip validate examples/broken/*.usda --format sarif --output out/validate-broken.sarif 2>/dev/null || true
echo "SARIF for CI: out/validate-broken.sarif"
