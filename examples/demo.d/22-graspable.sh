# step: SimReady graspable prop — grasp vector lines listed, checked (one misses on purpose), planned and proven (FET005 on the CPU)
echo "\$ usdgrip info examples/graspable_prop.usda"
usdgrip info examples/graspable_prop.usda
echo "\$ usdgrip validate examples/graspable_prop.usda"
usdgrip validate examples/graspable_prop.usda && status=0 || status=$?
echo "(exit $status: grasp_identifier_02 misses the block, GP.001, as intended)"
echo "\$ usdgrip plan examples/graspable_prop.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp --method lines -o out/graspable_prop.yaml"
usdgrip plan examples/graspable_prop.usda --object /Block --gripper examples/gripper.usda:/Gripper/tcp \
    --method lines -o out/graspable_prop.yaml
echo "\$ usdgrip evaluate examples/graspable_prop.usda --gripper examples/gripper.usda:/Gripper/tcp --lines --trials 3"
usdgrip evaluate examples/graspable_prop.usda --gripper examples/gripper.usda:/Gripper/tcp --lines \
    --trials 3 2>/dev/null && status=0 || status=$?
echo "(exit $status: grasp_identifier_01 holds; grasp_identifier_02 misses the block, so no grasp on it can be proven, as intended)"
echo "\$ usdgrip evaluate examples/graspable_prop.usda --gripper examples/gripper.usda:/Gripper/tcp --lines -q -o out/graspable_prop_lines.json"
usdgrip evaluate examples/graspable_prop.usda --gripper examples/gripper.usda:/Gripper/tcp --lines \
    -q -o out/graspable_prop_lines.json && status=0 || status=$?
python3 - out/graspable_prop_lines.json <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for line in report["lines"]:
    held = f" by {line['grasp']['id']}" if line["held"] else f": {line['note'] or 'none held'}"
    print(f"  {line['name']}: {line['verdict']}{held}")
print(f"  summary: {report['summary']}")
PY
echo "(exit $status; the JSON report for CI: out/graspable_prop_lines.json)"
