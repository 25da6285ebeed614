# expect: invalid line=3
def plan():
	for x in ['lime', 'unicorn']:
		grab(x)
