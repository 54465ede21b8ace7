# step: usdgrip evaluate --grasps — the mug's grasps as Isaac Sim's Grasp Editor and GraspGen write them (base-link poses)
echo "\$ usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp --grasps examples/grasps/mug_grasp_editor.yaml --table --trials 2 --show 3 -o out/mug_grasp_editor_evaluated.yaml"
usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \
    --grasps examples/grasps/mug_grasp_editor.yaml --table --trials 2 --show 3 \
    -o out/mug_grasp_editor_evaluated.yaml 2>&1 | grep -v "UsdPhysics"
echo "(GraspGen's file names no gripper frame: read as the site's grasp frame, then with --gripper-frame /Gripper)"
echo "\$ usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp --grasps examples/grasps/mug_graspgen.yaml --table --show 0 -o out/mug_graspgen_as_g.yaml"
usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \
    --grasps examples/grasps/mug_graspgen.yaml --table --show 0 -o out/mug_graspgen_as_g.yaml \
    2>/dev/null && status=0 || status=$?
echo "(exit $status: read as grasp frames, the base-link poses miss)"
echo "\$ usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp --grasps examples/grasps/mug_graspgen.yaml --gripper-frame /Gripper --table --trials 2 --show 3 -o out/mug_graspgen_evaluated.yaml"
usdgrip evaluate examples/mug.usda --object /Mug --gripper examples/gripper.usda:/Gripper/tcp \
    --grasps examples/grasps/mug_graspgen.yaml --gripper-frame /Gripper --table --trials 2 \
    --show 3 -o out/mug_graspgen_evaluated.yaml 2>/dev/null
