# expect: invalid line=5
def plan():
	# 0: go
	walk('kitchen')
	fly('kitchen')
