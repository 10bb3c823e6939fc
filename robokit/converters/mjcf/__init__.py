"""MuJoCo MJCF scenes (`--to mjcf`): convex collision pieces, free bodies, floor, lights, cameras."""
