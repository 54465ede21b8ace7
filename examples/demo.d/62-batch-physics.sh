# step: usdgrip batch plan --evaluate — plan and grasp-and-lift every example object in worker processes; batch evaluate the files again
rm -rf out/batch_physics out/batch_evaluated
rm -f out/batch_physics.jsonl
echo "\$ usdgrip batch plan examples/ --glob '[bgmpt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp --out-dir out/batch_physics --max-candidates 20 --evaluate --trials 2 --table --out out/batch_physics.jsonl"
usdgrip batch plan examples/ --glob '[bgmpt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp \
    --out-dir out/batch_physics --max-candidates 20 --evaluate --trials 2 --table \
    --out out/batch_physics.jsonl --quiet && status=0 || status=$?
echo "(exit $status: the pan gets no candidate, as in the plan step)"
echo "\$ usdgrip batch evaluate examples/ --glob '[mt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp --grasps-dir out/batch_physics --out-dir out/batch_evaluated --trials 3 --table --format jsonl --quiet   # each row's physics:"
usdgrip batch evaluate examples/ --glob '[mt]*.usda' --gripper examples/gripper.usda:/Gripper/tcp \
    --grasps-dir out/batch_physics --out-dir out/batch_evaluated --trials 3 --table \
    --format jsonl --quiet 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line); o = r["output"]
    print(r["path"], r["status"], {k: o[k] for k in ("file", "grasps", "held", "success_rate", "first_success_rate", "outcomes")})'
