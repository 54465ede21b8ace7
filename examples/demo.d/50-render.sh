# step: usdgrip render — the tote, its slots and the planned grasps as a PNG (no viewer needed)
if [ ! -f out/tote_grasps.yaml ]; then  # written by the plan step; plan here when run alone
    usdgrip plan examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
        --max-candidates 50 --seed 0 -o out/tote_grasps.yaml -q
fi
echo "\$ usdgrip render examples/tote.usda --slots --grasps out/tote_grasps.yaml -o out/tote.png"
usdgrip render examples/tote.usda --slots --grasps out/tote_grasps.yaml -o out/tote.png
echo "\$ usdgrip render examples/gripper.usda -o out/gripper.png"
usdgrip render examples/gripper.usda -o out/gripper.png
echo "\$ usdgrip render examples/mug.usda --grasps out/mug_grasp_editor_evaluated.yaml --gripper examples/gripper.usda:/Gripper/tcp -o out/mug_editor.png"
if [ -f out/mug_grasp_editor_evaluated.yaml ]; then
    usdgrip render examples/mug.usda --grasps out/mug_grasp_editor_evaluated.yaml \
        --gripper examples/gripper.usda:/Gripper/tcp -o out/mug_editor.png 2>/dev/null
fi
