# step: render the tote, its slots and planned grasps to a PNG (no viewer needed)
usdgrip plan examples/tote.usda --object /Tote --gripper examples/gripper.usda:/Gripper/tcp \
    --max-candidates 12 -o out/tote_grasps.yaml -q
usdgrip render examples/tote.usda --slots --grasps out/tote_grasps.yaml -o out/tote.png
