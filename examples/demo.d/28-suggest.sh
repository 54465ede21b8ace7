# step: usdgrip suggest — a bare pan (no slots) to physics-proven slots in an edits layer, then validated, sampled and evaluated
rm -f out/pan.edits.usda
echo "\$ usdgrip info examples/pan.usda   # bare: no slots, no lines"
usdgrip info examples/pan.usda
cmd="usdgrip suggest slots examples/pan.usda --object /Pan --gripper examples/gripper.usda:/Gripper/tcp --table --layer out/pan.edits.usda"
echo "\$ $cmd"
$cmd
echo "\$ usdgrip validate out/pan.edits.usda"
usdgrip validate out/pan.edits.usda
echo "\$ usdgrip sample out/pan.edits.usda --prim /Pan --count 2 --format text"
usdgrip sample out/pan.edits.usda --prim /Pan --count 2 --format text
cmd="usdgrip plan out/pan.edits.usda --object /Pan --gripper examples/gripper.usda:/Gripper/tcp --method slots --max-candidates 6 --evaluate --table --show 3 -o out/pan_slot_grasps.yaml"
echo "\$ $cmd"
$cmd
